"""How each resource reads the API. Resources declare (`streams.py`); the client fetches; these read.

Every reader yields one batch per page (its rows, or the Arrow table a helper process packed them into:
`batches.py`, `offload.py`), so nothing larger than a page is held in memory (except the small
per-product snapshots, which must be complete before they replace a table).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import dlt
import pendulum
import pyarrow as pa

from sources.platform.batches import Batch, Rows, observe_newest, values_at
from sources.platform.client import PageDecode, PlatformClient
from sources.platform.cursor import Cursor
from sources.platform.errors import NotFoundError, PermissionDeniedError, PlatformError
from sources.platform.extraction import current_load_id, sales_selected, selected_resources
from sources.platform.guard import scope_message
from sources.platform.interleave import interleaved
from sources.platform.models import RecordValidationError
from sources.platform.models.columnar import packed_pages
from sources.platform.offload import PageDecoder
from sources.platform.operations import OPERATIONS_BY_NAME
from sources.platform.page_decoding import DecodedPage, PageJob
from sources.platform.paging import Page
from sources.platform.records import RecordReader, new_rows
from sources.platform.report import RunReport
from sources.platform.sales import (
    SaleFetcher,
    SaleIdQueue,
    SaleLedger,
    announced_sale_ids,
    drain,
    keep_pending_sale_ids,
    pending_sale_ids,
)
from sources.platform.settings import SourceSettings
from sources.platform.streams import SALE_REFERENCES, STREAMS, Stream
from sources.platform.windows import date_windows, iso_z

logger = logging.getLogger("platform_sync.source")

# The date windows of a first run walked at once, and their decoded pages held until written.
WINDOWS_AT_ONCE = 3
WINDOW_PAGES_WAITING = 4


@dataclass
class SourceContext:
    """What the readers of one source instance share: one client, the settings, the run's report."""

    client: PlatformClient
    settings: SourceSettings
    report: RunReport
    sale_ids: SaleIdQueue
    snapshot_at: datetime
    records: RecordReader
    decoder: PageDecoder | None = None  # helper processes for the pages of large flat lists
    _finished: set[str] = field(default_factory=set)
    _pending_sales: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _known_sales: set[str] | None = None  # the destination's sale ids, read when first needed

    def parse(self, stream: Stream, items: Iterable[Any], extra: Mapping[str, Any] | None = None) -> Rows:
        """The rows of a page's records (`records.RecordReader`)."""
        return [row for row, _ in self.records.read(stream, items, extra)]

    def offload(
        self, stream: Stream, extra: Mapping[str, Any] | None = None, cursor: tuple[str, ...] | None = None
    ) -> PageDecode | None:
        """How a walk over the stream's pages hands them to the helper processes (`offload.py`), if it
        can: the stream's model is flat and pages are packed into Arrow tables. The rows whose `cursor`
        field departs from the spec come back apart (`DecodedPage.cursor_departed`)."""
        decoder = self.decoder
        if decoder is None or not self.settings.arrow_pages:
            return None
        if stream.columnar_layout() is None:
            return None
        load_id = current_load_id()

        def decode(content: bytes, number: int) -> Page | None:
            if number < decoder.from_page:
                return None
            tolerant = not self.settings.strict
            job = PageJob(stream.name, stream.operation, number, content, extra, load_id, tolerant, cursor)
            return decoder.decode(job)

        return decode

    def batches(
        self, stream: Stream, page: Page, extra: Mapping[str, Any] | None = None
    ) -> tuple[list[Batch], Rows]:
        """The page's rows; or, if a helper process decoded it, its table and the rows it left as rows
        (with their departures recorded here). Apart: the rows whose cursor field departed, which must
        be loaded but not shown to the cursor (only a helper's page has any)."""
        if not isinstance(page.items, pa.Table):
            return [self.parse(stream, page.items, extra)], []
        if isinstance(page, DecodedPage):
            for record_id, departures in page.departures:
                self.report.departures.record(stream.name, record_id, departures)
            return [page.items, *([page.leftover] if page.leftover else [])], page.cursor_departed
        return [page.items], []

    def pack(self, stream: Stream, pages: Iterable[Batch]) -> Iterator[Batch]:
        """The pages as Arrow tables where the stream's model is flat (dlt then skips normalizing them
        row by row) and `arrow_pages` is on, else as they are; see `models/columnar.py`."""
        layout = stream.columnar_layout() if self.settings.arrow_pages else None
        return packed_pages(layout, pages, current_load_id())

    def finished(self, resource: str) -> None:
        """Note that a resource's reader is done; once all selected ones are, the helpers stop (they would
        only hold memory through normalize and load)."""
        if self.decoder is None:
            return
        selected = selected_resources()
        with self._lock:
            self._finished.add(resource)
            done = selected is not None and selected <= self._finished
        if done:
            self.decoder.close()

    def missing_scopes(self, stream: Stream) -> list[str]:
        granted = self.settings.granted_scopes
        if granted is None:
            return []
        return [scope for scope in OPERATIONS_BY_NAME[stream.operation].scopes if scope not in granted]

    def offer_sale_ids(self, stream: Stream, batch: Batch) -> None:
        path = SALE_REFERENCES.get(stream.name)
        if not path:
            return
        if sales_selected():
            self.sale_ids.offer(values_at(batch, path))
        else:
            self._keep_sale_ids_pending(values_at(batch, path))

    def _keep_sale_ids_pending(self, ids: Iterable[Any]) -> None:
        """An extract without `sales` (`--resources event_attendees`) moves its producers' cursors past
        the sales they reference: the ids the destination does not hold yet join `sales`' pending ids
        (`commit_pending_sales`), committed with this extract, so the next run with `sales` fetches them."""
        with self._lock:
            if self._known_sales is None:
                self._known_sales = set(SaleLedger.from_destination(0, 0, time.time()).known)
            self._pending_sales.update(str(i) for i in ids if i not in (None, ""))

    def commit_pending_sales(self) -> None:
        """Write the ids kept by `_keep_sale_ids_pending` into `sales`' state, once per producer (sorting
        the whole list on every page was quadratic: minutes at a million fiscal documents)."""
        with self._lock:  # producers end in their own threads: one read-modify-write at a time
            fresh, self._pending_sales = self._pending_sales, set()
            fresh.difference_update(self._known_sales or ())
            if fresh:
                sales = dlt.current.source_state().setdefault("resources", {}).setdefault("sales", {})
                fresh.update(pending_sale_ids(sales))
                keep_pending_sale_ids(sales, fresh)


def read_all(
    ctx: SourceContext,
    stream: Stream,
    params: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Iterator[Batch]:
    """Full scan of a paged list."""
    decode = ctx.offload(stream, extra)
    for page in ctx.client.paginate(stream.operation, params=dict(params or {}), decode=decode):
        batches, _ = ctx.batches(stream, page, extra)  # no cursor: no row is set apart
        yield from batches


def read_lesson_comments(ctx: SourceContext) -> Iterator[Batch]:
    """All comments, or those of the configured courses (then stamped with their `course_id`, which the
    API's comment does not carry)."""
    stream = STREAMS["lesson_comments"]
    if not ctx.settings.course_ids:
        yield from read_all(ctx, stream)
    for course_id in ctx.settings.course_ids:
        yield from read_all(ctx, stream, {"courseId": course_id}, {"course_id": course_id})


def read_product_children(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """A complete snapshot of each product's campaigns or partners, yielded only once it is whole.

    The table is replaced by what is yielded, so a run that fails half way must yield nothing.
    """
    snapshot: Rows = []
    for page in ctx.client.paginate("list_products"):
        for product in page.items:
            product_id = str(product["id"])
            try:
                children = ctx.client.request(stream.operation, path_params={"id": product_id})
            except NotFoundError:
                continue  # removed between the listing and this request
            snapshot.extend(ctx.parse(stream, children, {"product_id": product_id}))
    yield snapshot


def read_subscriptions(ctx: SourceContext) -> Iterator[Rows]:
    """Subscriptions by update date: windows from the start date on the first run, then one open window."""
    stream = STREAMS["subscriptions"]
    cursor = Cursor(dlt.current.resource_state(), "updated_at")
    now = pendulum.now("UTC")
    if cursor.value is None:
        windows: list[tuple[datetime, datetime | None]] = list(
            date_windows(ctx.settings.start_date, now, ctx.settings.subscriptions_window_days)
        )
        windows[-1] = (windows[-1][0], None)  # the newest window stays open: the API's clock may be ahead
    else:
        windows = [(cursor.value, None)]
    for lower, upper in windows:
        params = {"filterBy": "update", "startDate": iso_z(lower)}
        if upper is not None:
            params["endDate"] = iso_z(upper)
        for page in ctx.client.paginate(stream.operation, params=params):
            rows = new_rows(cursor, ctx.records.read(stream, page.items, cursor=("updatedAt",)), "updatedAt")
            ctx.offer_sale_ids(stream, rows)
            yield rows
        # Only values seen in data move the cursor, never our clock: the API's clock may be behind ours.
        cursor.commit()


def read_fiscal_documents(ctx: SourceContext) -> Iterator[Batch]:
    """Fiscal documents by emission date; each run re-scans `fiscal_documents_lag_days` for status changes."""
    stream = STREAMS["fiscal_documents"]
    settings = ctx.settings
    cursor = Cursor(dlt.current.resource_state(), "emission_date")
    # The end date is required; a day ahead covers documents stamped by a server clock ahead of ours.
    upper = max(pendulum.now("UTC"), cursor.value or settings.start_date) + pendulum.duration(days=1)
    if cursor.value is None:  # the first run backfills in windows
        windows = list(date_windows(settings.start_date, upper, settings.fiscal_documents_window_days))
    else:  # later runs re-scan the lag and whatever came since, in one paged request
        lag = pendulum.duration(days=settings.fiscal_documents_lag_days)
        windows = [(max(settings.start_date, cursor.value - lag), upper)]
    emission, document_id = ("document", "emissionDate"), ("document", "id")
    decode = ctx.offload(stream, cursor=emission)

    def walk(window_start: datetime, window_end: datetime) -> Callable[[], Iterator[Page]]:
        params = {"startDate": iso_z(window_start), "endDate": iso_z(window_end)}
        return lambda: ctx.client.paginate(stream.operation, params=params, decode=decode)

    # Windows are walked three at a time (`interleave.py`): the cursor keeps the newest value seen in any
    # order and is committed only after the last page.
    walks = [walk(window_start, window_end) for window_start, window_end in windows]
    for page in interleaved(walks, parallel=WINDOWS_AT_ONCE, depth=WINDOW_PAGES_WAITING):
        if isinstance(page.items, pa.Table):  # decoded by a helper, the departed cursor values apart
            batches, cursor_departed = ctx.batches(stream, page)
            for batch in batches:
                observe_newest(cursor, batch, emission, document_id)
            if cursor_departed:
                batches.append(cursor_departed)
        else:
            tracked = ctx.records.read(stream, page.items, cursor=emission)
            batches = [[row for row, _ in tracked]]
            observe_newest(cursor, [row for row, departed in tracked if not departed], emission, document_id)
        for batch in batches:
            ctx.offer_sale_ids(stream, batch)
            yield batch
    cursor.commit()


def read_events(ctx: SourceContext) -> Iterator[Rows]:
    stream = STREAMS["events"]
    for event_id in ctx.settings.event_ids:
        try:
            event = ctx.client.request(stream.operation, path_params={"id": event_id})
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"event {event_id} in event_ids was not read: {exc}")
            continue
        yield ctx.parse(stream, [event])


def read_attendees(ctx: SourceContext) -> Iterator[Rows]:
    """Attendees of each configured event, each event with its own `modifiedAt` cursor."""
    stream = STREAMS["event_attendees"]
    cursors = dlt.current.resource_state().setdefault("modified_at", {})
    for event_id in ctx.settings.event_ids:
        cursor = Cursor(cursors, event_id)
        since = cursor.value or ctx.settings.start_date
        params = {"modifiedAtGte": iso_z(since), "order": "asc"}
        try:
            for page in ctx.client.paginate(stream.operation, path_params={"id": event_id}, params=params):
                tracked = ctx.records.read(stream, page.items, cursor=("modifiedAt",))
                rows = new_rows(cursor, tracked, "modifiedAt")
                ctx.offer_sale_ids(stream, rows)
                yield rows
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"attendees of event {event_id} were not read: {exc}")
            continue
        cursor.commit()


def read_enrollments(ctx: SourceContext) -> Iterator[Rows]:
    stream = STREAMS["enrollments"]
    for school in ctx.settings.schools:
        for student in school.student_slugs:
            path = {"teamSlug": school.team_slug, "studentSlug": student}
            extra = {"team_slug": school.team_slug, "student_slug": student}
            try:
                for page in ctx.client.paginate(stream.operation, path_params=path):
                    yield ctx.parse(stream, page.items, extra)
            except NotFoundError as exc:
                ctx.report.warn(f"student {student} of school {school.team_slug} was not found: {exc}")


def read_deliveries(ctx: SourceContext) -> Iterator[Rows]:
    stream = STREAMS["deliveries"]
    for school in ctx.settings.schools:
        for delivery_id in school.delivery_ids:
            path = {"slug": school.team_slug, "deliveryId": delivery_id}
            try:
                delivery = ctx.client.request(stream.operation, path_params=path)
            except NotFoundError as exc:
                ctx.report.warn(f"delivery {delivery_id} of school {school.team_slug} was not found: {exc}")
                continue
            yield ctx.parse(stream, [delivery], {"team_slug": school.team_slug})


def read_community_snapshot(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Top posts or commenters of each community, stamped with this run's snapshot time."""
    days = ctx.settings.community_days
    for community_id in ctx.settings.community_ids:
        extra = {"community_id": community_id, "days": days, "snapshot_at": ctx.snapshot_at}
        path = {"communityId": community_id}
        try:
            if stream.name == "community_top_posts":
                try:
                    answer = ctx.client.request(stream.operation, path_params=path, params={"days": days})
                except NotFoundError:
                    continue  # "no posts with comments to show": an empty snapshot, not an error
                yield ctx.parse(stream, answer.get("items") or [], extra)
            else:
                for page in ctx.client.paginate(stream.operation, path_params=path, params={"days": days}):
                    yield ctx.parse(stream, page.items, extra)
        except PermissionDeniedError as exc:
            ctx.report.warn(f"community {community_id} was not read: {exc}")


def read_webhook_origins(ctx: SourceContext) -> Iterator[Rows]:
    stream = STREAMS["webhook_origins"]
    yield ctx.parse(stream, ctx.client.request(stream.operation))


def read_sales(ctx: SourceContext) -> Iterator[Rows]:
    stream = STREAMS["sales"]
    settings = ctx.settings
    selected = set(dlt.current.source().resources.selected)
    ctx.sale_ids.expect(name for name in SALE_REFERENCES if name in selected)
    state = dlt.current.resource_state()
    ledger = SaleLedger.from_destination(
        settings.sales_refresh_days, settings.sales_recheck_hours, time.time()
    )
    # Sales that webhooks announced as changed come first, before the backlog (sales.py).
    announced, announced_until = announced_sale_ids(state.get("webhooks_loaded_until"))
    if announced_until is not None:
        state["webhooks_loaded_until"] = announced_until
    carried = [
        *announced,
        *pending_sale_ids(state),
        *(i for i in settings.sale_ids if i not in ledger.known),
    ]
    if missing := ctx.missing_scopes(stream):
        keep_pending_sale_ids(state, [*carried, *drain(ctx.sale_ids, ledger.known)])
        ctx.report.skip(stream.name, scope_message(stream, missing))
        return
    fetcher = SaleFetcher(
        ctx.client, settings.sales_max_requests, settings.sales_concurrency, ctx.report.plan_sale_details
    )
    page: Rows = []
    page_ids: list[str] = []  # the ids of `page`: pending for the next run until dlt has the page
    try:
        for sale_id, sale in fetcher.run(ctx.sale_ids, ledger, carried):
            if sale is None:
                continue
            try:
                page.extend(ctx.parse(stream, [sale]))
                page_ids.append(sale_id)
            except RecordValidationError as exc:  # strict: keep the id for a later run rather than lose it
                fetcher.left_over.append(sale_id)
                ctx.report.fail(stream.name, str(exc))
            if len(page) >= 100:
                yield page
                page, page_ids = [], []
        if page:
            yield page
            page, page_ids = [], []
    except PlatformError:
        # A token revoked mid-run (or any failure of the fetcher) must not drop the sales fetched so far:
        # they are handed to dlt before the error goes on to `guarded`, which reports it.
        fetcher.left_over.extend(drain(ctx.sale_ids, ledger.known))
        if page:
            rows, page, page_ids = page, [], []
            yield rows
        raise
    finally:
        # Whatever was fetched but not handed over (the extract stopped this generator) waits as pending.
        keep_pending_sale_ids(state, [*fetcher.left_over, *page_ids])
    if fetcher.left_over:
        ctx.report.warn(
            f"{len(fetcher.left_over)} sale ids wait for the next run "
            f"(sales_max_requests = {settings.sales_max_requests} was reached or requests failed)"
        )
