"""The store's financial area: transfers and buyer fiscal documents (spec 4.10, 4.17)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import dlt
import pendulum

from sources.platform.extraction import sales_selected
from sources.platform.fastpath.batches import Batch
from sources.platform.fastpath.interleave import FAN_WALKS_AT_ONCE
from sources.platform.models import FiscalDocument, Transfer
from sources.platform.resources.context import SourceContext, read_all
from sources.platform.resources.stream import Stream
from sources.platform_client.windows import date_windows, iso_z

# The date windows of a first run walked at once, and their decoded pages held until written. As many as
# the windows of a fan (`interleave.py`): a first run's three dozen monthly windows, mostly one page each,
# walked three at a time kept 3 requests in flight for most of the lists' time against a remote API
# (issue 27: 150 ms a request, bench/remote.py).
WINDOWS_AT_ONCE = FAN_WALKS_AT_ONCE
WINDOW_PAGES_WAITING = 4


def read_fiscal_documents(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """Fiscal documents by emission date; each run re-scans `fiscal_documents_lag_days` for status changes.

    Our own cursor (`cursor.py` says why not dlt's): the windows arrive interleaved, and a row whose
    emission date departs from the spec loads without moving it."""
    settings = ctx.settings
    cursor = ctx.cursor(dlt.current.resource_state(), "emission_date", stream, "document.emissionDate")
    # The end date is required; a day ahead covers documents stamped by a server clock ahead of ours.
    upper = max(pendulum.now("UTC"), cursor.value or settings.start_date) + pendulum.duration(days=1)
    if cursor.value is None:  # the first run backfills in windows
        windows = list(date_windows(settings.start_date, upper, settings.fiscal_documents_window_days))
    else:  # later runs re-scan the lag and whatever came since, in one paged request
        lag = pendulum.duration(days=settings.fiscal_documents_lag_days) + ctx.lookback()
        windows = [(max(settings.start_date, cursor.value - lag), upper)]
    emission, document_id = ("document", "emissionDate"), ("document", "id")
    # Windows are walked several at a time (`interleave.py`): the cursor keeps the newest value seen in any
    # order and is committed only after the last page. One road for every page, decoded here or by a
    # helper (`SourceContext.pages`): the rows whose emission date departed load without moving it.
    windows_params = [{"startDate": iso_z(start), "endDate": iso_z(end)} for start, end in windows]
    yield from ctx.pages(
        stream,
        windows_params,
        cursor=cursor,
        cursor_at=emission,
        id_at=document_id,
        parallel=WINDOWS_AT_ONCE,
        depth=WINDOW_PAGES_WAITING,
    )
    cursor.commit()
    # The documents of the sales found changed, whatever their age (`financial_followups.py`).
    yield from read_documents_of_changed_sales(ctx, stream, settings.start_date, upper)


TRANSFERS = Stream(
    "transfers",
    "list_transfers",
    Transfer,
    ("id",),
    "merge",
    read=read_all,
    description="Transfers, read whole (as often as the rate budget allows; statuses change), merged on id.",
    full_scan=True,
    created_at="createdAt",
    marks_deletions=True,
)
FISCAL_DOCUMENTS = Stream(
    "fiscal_documents",
    "list_fiscal_documents",
    FiscalDocument,
    ("document__id",),
    "merge",
    read=read_fiscal_documents,
    description="Buyer fiscal documents by emission-date windows, re-scanning a lag for changes.",
    sale_ids_at=("sale", "id"),
    newest_by="document__processing_date",
)


def read_documents_of_changed_sales(
    ctx: SourceContext, stream: Stream, start: datetime, end: datetime
) -> Iterator[Batch]:
    """The fiscal documents of every due sale (changed in this run or an earlier one), whatever their
    emission date between `start` and `end`; called by `fiscal_documents` once its windows are read.

    It first tells `sales` that this producer is done (else `sales` would wait for it while it waits
    for `sales`), then waits for `sales` to finish when it runs in this extract."""
    ctx.commit_pending_sales()
    ctx.sale_ids.finish(stream.name)
    if sales_selected():
        ctx.documents_due.wait_for_sales()
    for sale_id in ctx.documents_due.due():
        params = {"startDate": iso_z(start), "endDate": iso_z(end), "saleId": sale_id}
        # no cursor moves: any row loads; this producer has told `sales` it is done
        yield from ctx.pages(stream, params, offer_sale_ids=False)
        ctx.documents_due.done(sale_id)
