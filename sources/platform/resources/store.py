"""The store's catalogue and subscriptions: products with their campaigns and partners, affiliations,
subscriptions (spec 4.8, 4.11, 4.13, 4.15, 4.16)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import dlt
import pendulum

from sources.platform.fastpath.batches import Batch, Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE
from sources.platform.models import Affiliation, Campaign, Partner, Product, Subscription
from sources.platform.resources.context import SourceContext, read_all
from sources.platform.resources.store_renewals import READ_AT, READ_AT_COLUMN, read_renewals, read_time
from sources.platform.resources.stream import TEXT_KEY, Stream
from sources.platform_client.errors import NotFoundError
from sources.platform_client.windows import date_windows, iso_z


def read_product_children(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """A complete snapshot of each product's campaigns or partners, yielded only once it is whole.

    Merged on (product_id, id); what a complete snapshot does not hold (a deleted product's children, a
    product answering 404) is marked deleted after the load (`pipelines/deletions.py`). A run that fails
    half way yields nothing, so it never marks anything.
    """
    snapshot: Rows = []
    # Each product once, even when the list moved under the walk and is walked again: the snapshot
    # replaces the table, so a product's children twice would be duplicate rows. The list is an index:
    # its records as the API sent them (not `products`' rows: those are read, and their departures
    # recorded, by `products`), decoded in this process as they always were (`SourceContext.pages`).
    # The products' requests go several at once (`PlatformClient.each`) as the list is read.
    product_ids = (
        str(product["id"])
        for index in ctx.pages(PRODUCTS, distinct=True, as_sent=True)
        for product in index  # records as sent: rows, never a table
    )
    for product_id, answer in ctx.client.each(stream.operation, product_ids, lambda pid: {"id": pid}):
        try:
            children = answer.result()
        except NotFoundError:
            continue  # removed between the listing and this request
        snapshot.extend(ctx.parse(stream, children, {"product_id": product_id}))
    yield snapshot


def read_subscriptions(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """Subscriptions by update date: windows from the start date on the first run, then one open window
    from `cursor_lookback_minutes` before the cursor; then the renewals that fell due (`store_renewals.py`).

    Our own cursor (`cursor.py` says why not dlt's): it moves only on values seen in rows whose
    `updatedAt` is as the spec says and not later than the run's start by either clock. The windows are
    walked several at once (`SourceContext.pages`), so the cursor is committed once, after the last page
    of every window. Each row says when it was read (`_platform_read_at`, by the API's clock)."""
    cursor = ctx.cursor(dlt.current.resource_state(), "updated_at", stream, "updatedAt")
    now = pendulum.now("UTC")
    since = cursor.since()
    if since is None:
        windows: list[tuple[datetime, datetime | None]] = list(
            date_windows(ctx.settings.start_date, now, ctx.settings.subscriptions_window_days)
        )
        windows[-1] = (windows[-1][0], None)  # the newest window stays open: the API's clock may be ahead
    else:
        windows = [(max(ctx.settings.start_date, since), None)]
    seen: set[str] = set()
    windows_params = []
    for lower, upper in windows:
        params = {"filterBy": "update", "startDate": iso_z(lower)}
        if upper is not None:
            params["endDate"] = iso_z(upper)
        windows_params.append(params)
    # Only the rows new at the cursor's boundary load (`page_lists`' "new" rule); each page's rows say
    # when they were read, told as the page is taken (after the first answer: the API's clock is known).
    yield from ctx.pages(
        stream,
        windows_params,
        extra=lambda: {READ_AT: read_time(ctx)},
        cursor=cursor,
        cursor_at=("updatedAt",),
        keep="new",
        parallel=FAN_WALKS_AT_ONCE,
        depth=FAN_PAGES_WAITING,
        read_ids=seen,
    )
    # Only values seen in data move the cursor, never our clock: the API's clock may be behind ours.
    cursor.commit()
    yield from read_renewals(ctx, stream, seen)


PRODUCTS = Stream(
    "products",
    "list_products",
    Product,
    ("id",),
    "merge",
    read=read_all,
    description="Products, read whole (as often as the rate budget allows), merged on id.",
    full_scan=True,
    newest_by="updated_at",
    marks_deletions=True,
)
PRODUCT_CAMPAIGNS = Stream(
    "product_campaigns",
    "list_product_campaigns",
    Campaign,
    ("product_id", "id"),
    "merge",
    read=read_product_children,
    extra_columns={"product_id": TEXT_KEY},
    description="Campaigns of every product, read whole as the budget allows, merged on (product_id, id).",
    full_scan=True,
    fans_out=True,
    marks_deletions=True,
    deleted_with="products",
)
PRODUCT_PARTNERS = Stream(
    "product_partners",
    "list_product_partners",
    Partner,
    ("product_id", "id"),
    "merge",
    read=read_product_children,
    extra_columns={"product_id": TEXT_KEY},
    description="Partners of every product, read whole as the budget allows, merged on (product_id, id).",
    full_scan=True,
    fans_out=True,
    marks_deletions=True,
    deleted_with="products",
)
AFFILIATIONS = Stream(
    "affiliations",
    "list_affiliations",
    Affiliation,
    ("id",),
    "merge",
    read=read_all,
    description="Affiliations, read whole (as often as the rate budget allows), merged on id.",
    full_scan=True,
    newest_by="updated_at",
    marks_deletions=True,
)
SUBSCRIPTIONS = Stream(
    "subscriptions",
    "list_subscriptions",
    Subscription,
    ("id",),
    "merge",
    read=read_subscriptions,
    extra_columns={READ_AT: READ_AT_COLUMN},
    description="Subscriptions changed since the last run (filterBy=update), merged on id.",
    sale_ids_at=("firstInvoiceId",),
    newest_by="updated_at",
)
