"""The store's catalogue and subscriptions: products with their campaigns and partners, affiliations,
subscriptions (spec 4.8, 4.11, 4.13, 4.15, 4.16)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import dlt
import pendulum

from sources.platform import models
from sources.platform.cursor import Cursor
from sources.platform.fastpath.batches import Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE, fan_out
from sources.platform.records import new_rows
from sources.platform.resources.context import SourceContext, read_all
from sources.platform.resources.stream import TEXT_KEY, Stream
from sources.platform_client.errors import NotFoundError
from sources.platform_client.paging import Page
from sources.platform_client.windows import date_windows, iso_z


def read_product_children(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """A complete snapshot of each product's campaigns or partners, yielded only once it is whole.

    The table is replaced by what is yielded, so a run that fails half way must yield nothing.
    """
    snapshot: Rows = []
    # Each product once, even when the list moved under the walk and is walked again: the snapshot
    # replaces the table, so a product's children twice would be duplicate rows.
    for page in ctx.client.paginate("list_products", distinct=True):
        for product in page.items:
            product_id = str(product["id"])
            try:
                children = ctx.client.request(stream.operation, path_params={"id": product_id})
            except NotFoundError:
                continue  # removed between the listing and this request
            snapshot.extend(ctx.parse(stream, children, {"product_id": product_id}))
    yield snapshot


def read_subscriptions(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Subscriptions by update date: windows from the start date on the first run, then one open window.

    Our own cursor (`cursor.py` says why not dlt's): it moves only on values seen in rows whose
    `updatedAt` is as the spec says. The windows are walked several at once (`fan_out`), so the cursor
    is committed once, after the last page of every window."""
    cursor = Cursor(dlt.current.resource_state(), "updated_at")
    now = pendulum.now("UTC")
    if cursor.value is None:
        windows: list[tuple[datetime, datetime | None]] = list(
            date_windows(ctx.settings.start_date, now, ctx.settings.subscriptions_window_days)
        )
        windows[-1] = (windows[-1][0], None)  # the newest window stays open: the API's clock may be ahead
    else:
        windows = [(cursor.value, None)]

    def walk(lower: datetime, upper: datetime | None) -> Callable[[], Iterator[Page]]:
        params = {"filterBy": "update", "startDate": iso_z(lower)}
        if upper is not None:
            params["endDate"] = iso_z(upper)
        return lambda: ctx.client.paginate(stream.operation, params=params)

    walks = [(lower, walk(lower, upper)) for lower, upper in windows]
    for item in fan_out(walks, FAN_WALKS_AT_ONCE, FAN_PAGES_WAITING):
        if item.page is not None:
            tracked = ctx.records.read(stream, item.page.items, cursor=("updatedAt",))
            rows = new_rows(cursor, tracked, "updatedAt")
            ctx.offer_sale_ids(stream, rows)
            yield rows
    # Only values seen in data move the cursor, never our clock: the API's clock may be behind ours.
    cursor.commit()


PRODUCTS = Stream(
    "products",
    "list_products",
    models.Product,
    ("id",),
    "merge",
    read=read_all,
    description="Products, read whole (every run while cheap), merged on id.",
    full_scan=True,
    newest_by="updated_at",
)
PRODUCT_CAMPAIGNS = Stream(
    "product_campaigns",
    "list_product_campaigns",
    models.Campaign,
    ("product_id", "id"),
    "replace",
    read=read_product_children,
    extra_columns={"product_id": TEXT_KEY},
    description="Campaigns of every product, a complete snapshot every rescan_hours.",
    full_scan=True,
    fans_out=True,
)
PRODUCT_PARTNERS = Stream(
    "product_partners",
    "list_product_partners",
    models.Partner,
    ("product_id", "id"),
    "replace",
    read=read_product_children,
    extra_columns={"product_id": TEXT_KEY},
    description="Partners of every product, a complete snapshot every rescan_hours.",
    full_scan=True,
    fans_out=True,
)
AFFILIATIONS = Stream(
    "affiliations",
    "list_affiliations",
    models.Affiliation,
    ("id",),
    "merge",
    read=read_all,
    description="Affiliations, read whole (every run while cheap), merged on id.",
    full_scan=True,
    newest_by="updated_at",
)
SUBSCRIPTIONS = Stream(
    "subscriptions",
    "list_subscriptions",
    models.Subscription,
    ("id",),
    "merge",
    read=read_subscriptions,
    description="Subscriptions changed since the last run (filterBy=update), merged on id.",
    sale_ids_at=("firstInvoiceId",),
    newest_by="updated_at",
)
