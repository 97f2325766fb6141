"""World shapes of the benchmark of issue 45 (`bench/shapes.py`): sandbox worlds whose lists have one shape
each, and the source settings that read them so.

    python -m sandbox serve --world bench.shape_worlds:fan_500 --scale 300

A shape is a `SyntheticWorld` whose parts are built at scales of their own (`Parts`): the sales at the
world's `scale`, the products, events, transfers, lesson comments or school students at a larger one. The
five shapes of the issue:

- `small_lists`: 202 events, 300 students (2 schools of 150): a small paged list per event (attendees)
  and per student (enrollments), one detail request per event;
- `deep_lists`: 30,000 transfers and 40,000 lesson comments: two lists of 300 and 400 pages (the comments
  in one walk);
- `fan_500`: 500 products: one request per product for its campaigns, one for its partners;
- `windows_100`: 7-day windows over 699 days: 100 subscription windows and 101 fiscal-document windows,
  a page each or none;
- `ids_5000`: 5,000 sales, every one configured in `sale_ids`: one sale-details request per sale.

Outside the ids shape the sale details are capped at one request a run (`sales_max_requests = 1`): every
shape would otherwise also be a shape of thousands of sales found through its subscriptions, fiscal
documents and attendees, read at 30 a minute (scaled), and every run would last as long as those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from sandbox.world import SyntheticWorld
from sandbox.world.attendees import Attendees
from sandbox.world.cart import Carts
from sandbox.world.community import Communities
from sandbox.world.events import Events
from sandbox.world.finance import FiscalDocuments, Transfers
from sandbox.world.learning import Courses, Schools
from sandbox.world.products import Catalog
from sandbox.world.sale_record import SaleRecords
from sandbox.world.sales import Sales
from sandbox.world.subscriptions import Subscriptions

# The start date of every shape but `windows_100`: the sandbox world's history starts 2024-06-01.
START_DATE = "2024-06-01"
WINDOW_DAYS = 7
WINDOWS = 100


@dataclass(frozen=True)
class Parts:
    """The scale each part of a world is built at (None: the world's scale, its sales)."""

    sales: int
    products: int | None = None  # products: max(12, scale / 200)
    events: int | None = None  # events: min(365, max(3, scale / 4000)) over the history, + 2 ahead
    transfers: int | None = None  # transfers: max(24, scale / 30)
    comments: int | None = None  # lesson comments: max(60, scale / 2)
    schools: int | None = None  # students per school (2 schools): max(5, scale / 2000)


class ShapedWorld(SyntheticWorld):
    """`SyntheticWorld` with its parts built at the scales of `parts`, in the order its own `__init__`
    builds them (the parts built later depend on those before)."""

    def __init__(self, seed: int, parts: Parts):
        super().__init__(seed, parts.sales)
        self.parts = parts
        people, producer = self.people, self.people.get(0)
        scale = parts.sales
        self.catalog_ = Catalog(seed, parts.products or scale, people, producer.id, producer.name)
        self.events_ = Events(seed, parts.events or scale, self.catalog_, self.owner_id)
        self.sales = Sales(seed, scale, self.catalog_, self.events_)
        self.sale_records = SaleRecords(seed, self.sales, self.catalog_, people, producer)
        self.subs = Subscriptions(self.sales, people)
        self.fiscal = FiscalDocuments(seed, self.sales, self.sale_records, people, producer)
        self.transfers_ = Transfers(seed, parts.transfers or scale)
        self.attendees_ = Attendees(seed, self.events_, self.sales, self.sale_records, people)
        self.courses = Courses(seed, parts.comments or scale, people, self.sales.pool)
        self.schools = Schools(seed, parts.schools or scale, people, self.courses.names)
        self.communities = Communities(seed, scale, people, self.sales.pool)
        self.carts = Carts(seed, self.catalog_)


@dataclass(frozen=True)
class Shape:
    """One world shape: its world (`factory`, at `parts.sales` as the sandbox's `--scale`), the operations
    whose reads it is about, by kind of read (`focus`), and the source settings that read it."""

    name: str
    parts: Parts
    focus: dict[str, str]  # operation -> kind of read
    description: str
    by_course: bool = True  # lesson comments per configured course (False: one walk over all)

    @property
    def factory(self) -> str:
        return f"bench.shape_worlds:{self.name}"

    def world(self, seed: int) -> ShapedWorld:
        return ShapedWorld(seed, self.parts)

    def settings(self, world: ShapedWorld, today: date) -> dict[str, Any]:
        """The source settings of this shape's sync (beside `base_url`, the token and the catalog's ids)."""
        settings: dict[str, Any] = {"start_date": START_DATE, "sales_max_requests": 1}
        if self.name == "windows_100":
            # 699 days and some hours from the start to now: 100 windows of subscriptions; the fiscal
            # documents' end is a day ahead of now, 101 windows
            start = today - timedelta(days=WINDOW_DAYS * WINDOWS - 1)
            settings.update(
                start_date=start.isoformat(),
                subscriptions_window_days=WINDOW_DAYS,
                fiscal_documents_window_days=WINDOW_DAYS,
            )
        if self.name == "ids_5000":
            # every sale of the world, all new: the whole run's details go to them (no share is kept back
            # for re-verifying known sales, of which a first run has none)
            ids = sale_ids(world)
            settings.update(sale_ids=ids, sales_max_requests=len(ids), sales_reverify_share=0)
        return settings


def sale_ids(world: ShapedWorld) -> list[str]:
    """Every sale of the world at its clock."""
    return [world.sales.sale_id(i) for i in range(world.sales.count_at(world.now))]


PAGED, WINDOWED, FAN, IDS = "paged lists", "date windows", "per-parent fans", "ids"
KINDS = (PAGED, WINDOWED, FAN, IDS)
# The kind of read of every operation the sync reads (the lists read per parent are paged lists too).
KIND_OF: dict[str, str] = {
    "list_products": PAGED,
    "list_affiliations": PAGED,
    "list_transfers": PAGED,
    "list_lesson_comments": PAGED,
    "list_community_commenters": PAGED,
    "list_enrollments": PAGED,
    "list_attendees": PAGED,
    "list_subscriptions": WINDOWED,
    "list_fiscal_documents": WINDOWED,
    "list_product_campaigns": FAN,
    "list_product_partners": FAN,
    "event_details": FAN,
    "delivery_details": FAN,
    "top_commented_posts": FAN,
    "sale_details": IDS,
    "subscription_details": IDS,
}

SHAPES: dict[str, Shape] = {
    shape.name: shape
    for shape in (
        Shape(
            "small_lists",
            Parts(sales=3000, events=800_000, schools=300_000),
            {"list_attendees": PAGED, "list_enrollments": PAGED, "event_details": FAN},
            "many small lists: 202 events' attendees, 300 students' enrollments (a page each)",
        ),
        Shape(
            "deep_lists",
            Parts(sales=300, transfers=900_000, comments=80_000),
            {"list_transfers": PAGED, "list_lesson_comments": PAGED},
            "a few deep lists: 30,000 transfers (300 pages), 40,000 lesson comments (400 pages)",
            by_course=False,
        ),
        Shape(
            "fan_500",
            Parts(sales=300, products=100_000),
            {"list_product_campaigns": FAN, "list_product_partners": FAN},
            "a fan over 500 parents: each product's campaigns and partners, one request each",
        ),
        Shape(
            "windows_100",
            Parts(sales=5000),
            {"list_subscriptions": WINDOWED, "list_fiscal_documents": WINDOWED},
            "a list of 100 date windows: subscriptions and fiscal documents in 7-day windows",
        ),
        Shape(
            "ids_5000",
            Parts(sales=5000),
            {"sale_details": IDS},
            "5,000 sale details by id (every sale of the world configured as sale_ids)",
        ),
    )
}


def _factory(name: str) -> Callable[[int, int], ShapedWorld]:
    def build(seed: int, scale: int) -> ShapedWorld:
        return ShapedWorld(seed, replace(SHAPES[name].parts, sales=scale))

    build.__name__ = name
    return build


# The sandbox's `--world bench.shape_worlds:NAME` factories: callable(seed, scale), scale = the sales.
small_lists = _factory("small_lists")
deep_lists = _factory("deep_lists")
fan_500 = _factory("fan_500")
windows_100 = _factory("windows_100")
ids_5000 = _factory("ids_5000")
