"""`SyntheticWorld`: the whole platform as seen by one seller, derived from (seed, scale) and the clock.

See the package docstring (`sandbox/world/__init__.py`) for proportions and life histories.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from .api import Listing, Record, World, WorldError
from .attendees import Attendees
from .cart import Carts
from .clock import T0, iso, to_datetime, to_ms
from .community import Communities
from .events import Events
from .finance import FiscalDocuments, Transfers
from .learning import Courses, Schools
from .listing import RecordListing
from .people import People
from .products import Catalog
from .rng import Rng, entity_key
from .sale_record import SaleRecords
from .sales import Sales
from .subscriptions import Subscriptions
from .webhooks import Move, webhook_origins, world_moves


def _ms_floor(value: datetime) -> int:
    """An upper bound in whole milliseconds (records carry milliseconds): round down."""
    return to_ms(value)


def _ms_ceil(value: datetime) -> int:
    """A lower bound in whole milliseconds: round up, so a sub-millisecond bound stays inclusive-exact."""
    ms = to_ms(value)
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return ms + 1 if to_datetime(ms) < aware else ms


class SyntheticWorld:
    """A deterministic, lazily built world implementing the `World` Protocol (sandbox/world/api.py)."""

    def __init__(self, seed: int = 1, scale: int = 1000):
        if scale < 1:
            raise ValueError("scale must be >= 1")
        self.seed = seed
        self.scale = scale
        self.now = T0
        self.clock: datetime = to_datetime(T0)
        self.people = People(seed)
        producer = self.people.get(0)
        self.owner_id = Rng(entity_key(seed, "owner")).uuid()
        self.catalog_ = Catalog(seed, scale, self.people, producer.id, producer.name)
        self.events_ = Events(seed, scale, self.catalog_, self.owner_id)
        self.sales = Sales(seed, scale, self.catalog_, self.events_)
        self.sale_records = SaleRecords(seed, self.sales, self.catalog_, self.people, producer)
        self.subs = Subscriptions(self.sales, self.people)
        self.fiscal = FiscalDocuments(seed, self.sales, self.sale_records, self.people, producer)
        self.transfers_ = Transfers(seed, scale)
        self.attendees_ = Attendees(seed, self.events_, self.sales, self.sale_records, self.people)
        self.courses = Courses(seed, scale, self.people, self.sales.pool)
        self.schools = Schools(seed, scale, self.people, self.courses.names)
        self.communities = Communities(seed, scale, self.people, self.sales.pool)
        self.carts = Carts(seed, self.catalog_)

    # -- clock -----------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        """Move the clock forward (never back): records whose events fall before the new time change."""
        if seconds < 0:
            raise WorldError(422, "validation_error", "seconds must be >= 0")
        self.now += round(seconds * 1000)
        self.clock = to_datetime(self.now)

    def catalog(self) -> dict[str, Any]:
        t = self.now
        events = []
        for k in range(self.events_.count_at(t)):
            rec = self.events_.record(k)
            events.append(
                {"id": rec["id"], "title": rec["title"], "ticket_ids": [tk["id"] for tk in rec["tickets"]]}
            )
        return {
            "clock": iso(t),
            "events": events,
            "communities": [{"id": c.id, "name": c.name} for c in self.communities.items],
            "schools": [
                {
                    "team_slug": slug,
                    "student_slugs": list(self.schools.students[s]),
                    "delivery_ids": sorted(self.schools.deliveries[s]),
                }
                for s, slug in enumerate(self.schools.slugs)
            ],
            "courses": [
                {"id": cid, "lesson_ids": list(ls)}
                for cid, ls in zip(self.courses.ids, self.courses.lessons, strict=True)
            ],
            "products": [{"id": p.id} for p in self.catalog_.products],
        }

    # -- store -----------------------------------------------------------------------------------
    def _product(self, product_id: str) -> Any:
        p = self.catalog_.by_id.get(product_id)
        if p is None:
            raise WorldError(404, "not_found", f"product {product_id} not found")
        return p

    def products(self) -> Listing:
        return RecordListing([p.record for p in self.catalog_.products])

    def product_campaigns(self, product_id: str) -> list[Record]:
        return list(self.catalog_.extras(self._product(product_id)).campaigns)

    def product_partners(self, product_id: str) -> list[Record]:
        return list(self.catalog_.extras(self._product(product_id)).partners)

    def affiliations(self, product_ids: Sequence[str] | None) -> Listing:
        if not product_ids:
            return RecordListing(self.catalog_.affiliations())
        wanted = {self._product(pid).id for pid in product_ids}
        return RecordListing([a for a in self.catalog_.affiliations() if a["product"]["id"] in wanted])

    def transfers(self) -> Listing:
        return self.transfers_.listing(self.now)

    def subscriptions(
        self, start: datetime | None, end: datetime | None, filter_by: Literal["creation", "update"]
    ) -> Listing:
        if filter_by not in ("creation", "update"):
            raise WorldError(422, "validation_error", "filterBy must be creation or update")
        lo = _ms_ceil(start) if start is not None else None
        hi = _ms_floor(end) if end is not None else None
        return self.subs.listing(lo, hi, filter_by, self.now)

    def subscription(self, subscription_id: str) -> Record:
        return self.subs.record(self.subs.index_of(subscription_id, self.now), self.now)

    def sale(self, sale_id: str) -> Record:
        i = self.sales.index_of(sale_id, self.now)
        if i is None:
            raise WorldError(404, "not_found", "sale not found")
        return self.sale_records.record(i, self.now)

    def fiscal_documents(
        self,
        start: datetime,
        end: datetime,
        status: str | None = None,
        name: str | None = None,
        email: str | None = None,
        sale_id: str | None = None,
        product_id: str | None = None,
        document_id: str | None = None,
    ) -> Listing:
        return self.fiscal.listing(
            self.now, _ms_ceil(start), _ms_floor(end), status, name, email, sale_id, product_id, document_id
        )

    def create_cart(self, body: Record) -> Record:
        return self.carts.create(body)

    def created_carts(self) -> list[Record]:
        """Every cart created so far, oldest first (the sandbox's `/sandbox/carts`)."""
        return list(self.carts.created)

    # -- events ----------------------------------------------------------------------------------
    def _event_index(self, event_id: str) -> int:
        k = self.events_.index_of(event_id, self.now)
        if k is None:
            raise WorldError(404, "not_found", "event not found")
        return k

    def event(self, event_id: str) -> Record:
        return self.events_.record(self._event_index(event_id))

    def attendees(
        self,
        event_id: str,
        modified_gte: datetime | None = None,
        modified_lte: datetime | None = None,
        status: str | None = None,
        search: str | None = None,
        order: Literal["asc", "desc"] = "asc",
        ticket_id: str | None = None,
    ) -> Listing:
        records = self.attendees_.all_at(self._event_index(event_id), self.now)
        lo = iso(_ms_ceil(modified_gte)) if modified_gte is not None else None
        hi = iso(_ms_floor(modified_lte)) if modified_lte is not None else None
        needle = search.casefold() if search else None
        out = [
            r
            for r in records
            if (lo is None or r["modifiedAt"] >= lo)
            and (hi is None or r["modifiedAt"] <= hi)
            and (status is None or r["status"] == status)
            and (ticket_id is None or r["ticketId"] == ticket_id)
            and (needle is None or any(needle in str(r[f]).casefold() for f in ("name", "email", "document")))
        ]
        if order == "desc":
            out.reverse()
        return RecordListing(out)

    def add_attendee(self, body: Record) -> Record:
        return self.attendees_.add(body, self.now)

    # -- school, community, course, webhooks -----------------------------------------------------
    def enrollments(self, team_slug: str, student_slug: str) -> Listing:
        return self.schools.enrollments(team_slug, student_slug, self.now)

    def delivery(self, team_slug: str, delivery_id: int) -> Record:
        return dict(self.schools.delivery(team_slug, delivery_id))

    def top_commented_posts(self, community_id: int, days: int) -> list[Record]:
        return self.communities.get(community_id).top(days, self.now)

    def community_commenters(self, community_id: int, days: int) -> Listing:
        return self.communities.get(community_id).commenters(days, self.now)

    def lesson_comments(
        self,
        course_id: int | None = None,
        lesson_id: int | None = None,
        status: str | None = None,
        favorite: bool | None = None,
        answered: bool | None = None,
        read: bool | None = None,
        fixed: bool | None = None,
        email: str | None = None,
    ) -> Listing:
        return self.courses.comments(
            self.now, course_id, lesson_id, status, (favorite, answered, read, fixed), email
        )

    def webhook_origins(self) -> list[Record]:
        return webhook_origins()

    def moves(self, since: datetime, until: datetime) -> list[Move]:
        """What the sandbox announces by webhook for the clock interval (since, until]; not part of the
        World Protocol (a world without it announces nothing)."""
        return world_moves(self, to_ms(since), to_ms(until))


if TYPE_CHECKING:  # mypy checks here that SyntheticWorld implements the World Protocol exactly
    _conforms: World = SyntheticWorld()
