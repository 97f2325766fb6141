"""When a full-scan resource is read: as often as the rate budget and the schedule allow (`scan_budget.py`).

The API has no update filter for these resources (`Stream.full_scan`), so reading one costs as much in a
run with nothing new as in the first run. Each complete scan's cost is counted in distinct requests
(`CountingClient`: a page read again because the list moved, or a retry, is not counted again); from it,
the operation's rate limit and the interval between runs, `scan_budget.plan` says whether the resource is
read on every run, every k-th run or every `rescan_hours`, and what the table's promise is.
A per-resource `rescan_hours_by_resource` is the user's explicit choice and wins.

The time and cost of each resource's last complete scan are kept in the source's dlt state and written
only after the last page was yielded: dlt commits that state in the same load package as the rows, so a
scan that failed or was killed is never taken for a complete one and is repeated by the next run. (Not
in the resource's own state: dlt empties that at the start of every run for `replace` resources, such as
the product snapshots.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

import dlt
import pendulum

from sources.platform.fastpath.batches import Batch, values_at
from sources.platform.guard import keep_replaced_table
from sources.platform.heads import (
    HEADS_KEY,
    TAILS_KEY,
    ListOrder,
    ScanOrder,
    Span,
    head_order,
    note_head,
    note_order,
    note_tail,
    read_until_known,
    reads_heads,
    tail_order,
    tail_span,
)
from sources.platform.records import key_paths
from sources.platform.report import ScanSchedule
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream
from sources.platform.run_budget import HEADS, WHOLE_SCANS, RequestSplit
from sources.platform.scan_budget import RUN_STARTS_KEY, Budget, Plan, note_run_start, operation_cost, plan
from sources.platform.seen_keys import SeenKeys
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import MalformedResponseError
from sources.platform_client.paged_list import PagedList, RawPage
from sources.platform_client.paging import Page, PagedBody

P = TypeVar("P", bound=PagedBody)

# Source state keys, by resource name: the ISO time of the start of the run of its last complete scan,
# and the number of distinct requests that scan made (`CountingClient`).
LAST_SCANS_KEY = "last_full_scan_at"
SCAN_COSTS_KEY = "last_full_scan_requests"
# The same scans' run stamps (`runclock.RunClock.stamp`), for `_platform_freshness` only: the schedule
# compares `LAST_SCANS_KEY` with the next run's start by the same clock, ours, so a scan stamped by the
# API's clock months behind ours is not taken as months old.
SCAN_STAMPS_KEY = "last_full_scan_stamp"


def scan_when_due(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """Read the resource whole if it is due (or `rescan` forces it); else report it not due and read
    nothing, or only its head where it is a list seen sorted newest first (`heads.py`)."""
    state = dlt.current.source_state()
    last_scans: dict[str, str] = state.setdefault(LAST_SCANS_KEY, {})
    costs: dict[str, int] = state.setdefault(SCAN_COSTS_KEY, {})
    # The run's start, not the scan's end, is what is recorded and compared: a run scheduled every
    # `rescan_hours` then rescans every time, however long the scan itself took.
    run_started_at = ctx.snapshot_at
    last_scan = stamped_time(last_scans, stream.name)
    starts: list[str] = state.setdefault(RUN_STARTS_KEY, [])
    note_run_start(starts, run_started_at)
    schedule = scan_plan(ctx, stream, costs)
    if (
        last_scan is not None
        and not ctx.settings.rescan
        and not is_due(last_scan, schedule.interval, run_started_at)
        and _table_is_loaded(stream)
    ):
        heads: dict[str, str] = state.setdefault(HEADS_KEY, {})
        tails: dict[str, dict[str, Any]] = state.setdefault(TAILS_KEY, {})
        sorted_list = (stream.name in heads or stream.name in tails) and reads_heads(ctx, stream)
        if not sorted_list:
            ctx.report.schedule_scan(stream.name, _scheduled(schedule, last_scan))
            ctx.report.mark_not_due(stream.name, not_due_reason(last_scan, schedule))
            keep_replaced_table(stream)
            return
        schedule = with_heads(schedule)
        ctx.report.schedule_scan(stream.name, _scheduled(schedule, last_scan))
        yield from read_new_records(ctx, stream, heads, tails, last_scan, schedule)
        return
    counting = CountingClient(ctx.client, ctx.report.spent, WHOLE_SCANS)
    # The copy shares the context's sets, queue and lock; a full scan produces no sale ids, so it never
    # rebinds the pending ids that `commit_pending_sales` swaps.
    keys = SeenKeys() if marks_deletions(ctx, stream) else None  # 8 bytes a record (`seen_keys.py`)
    order = ScanOrder(stream) if reads_heads(ctx, stream) else None
    for batch in stream.read(replace(ctx, client=counting), stream):
        if keys is not None:
            keys.extend(batch_keys(stream, batch))
        if order is not None:
            order.see(batch)
        yield batch
    # Reached only when the scan ran to its end: an exception leaves the previous complete scan's time.
    if keys is not None:
        ctx.report.scan_complete(stream.name, keys)
    last_scans[stream.name] = run_started_at.isoformat()
    ctx.note_stamp(SCAN_STAMPS_KEY, stream.name)
    costs[stream.name] = counting.requests
    note_order(state, stream, order, counting.span)
    after = scan_plan(ctx, stream, costs)
    if (
        order is not None
        and (stream.name in state[HEADS_KEY] or stream.name in state[TAILS_KEY])
        and after.interval
    ):
        after = with_heads(after)
    ctx.report.schedule_scan(stream.name, _scheduled(after, run_started_at))


def read_new_records(
    ctx: SourceContext,
    stream: Stream,
    heads: dict[str, str],
    tails: dict[str, dict[str, Any]],
    last_scan: datetime,
    schedule: Plan,
) -> Iterator[Batch]:
    """The new records of a list seen sorted, in a run that does not read it whole: its head (newest
    first) or its tail (oldest first), until a record its last read saw (`heads.py`)."""
    order: ListOrder
    if stream.name in heads:
        order, tail, what = head_order(stream, heads), None, "head"
    else:
        order, tail, what = tail_order(stream, tails), tail_span(stream, tails), "tail"
    counting = CountingClient(ctx.client, ctx.report.spent, HEADS, tail=tail)
    yield from read_until_known(replace(ctx, client=counting), stream, order)
    if tail is None:
        note_head(heads, stream, order)
    else:
        note_tail(tails, stream, order, counting.span)
    ctx.report.mark_not_due(
        stream.name, f"{not_due_reason(last_scan, schedule)}; its {what} read: {order.records:,} records"
    )


def scan_plan(ctx: SourceContext, stream: Stream, costs: Mapping[str, int]) -> Plan:
    """`scan_budget.plan` for `stream` with this run's settings, rates and measured run interval."""
    settings = ctx.settings
    from sources.platform.resources import STREAMS  # the registry imports the readers, which import this

    operation = stream.operation
    same = [name for name, other in STREAMS.items() if other.full_scan and other.operation == operation]
    rate = ctx.client.rate_limits.get(stream.operation) or settings.unlisted_rate_limit
    interval = ctx.budget.interval  # the run's (`run_budget.py`): one interval for every purpose
    shares = Budget(settings.scan_budget_share, settings.rescan_hours, settings.rescan_hours_by_resource)
    cost = operation_cost(costs, stream.name, same)
    return plan(stream.name, cost, rate * ctx.client.rate_limit_time_scale, interval, shares)


def with_heads(schedule: Plan) -> Plan:
    """The plan of a list whose head is read every run: new records every run, changes as planned."""
    return dataclasses.replace(schedule, promise=f"new rows every run, changes: {schedule.promise}")


def _scheduled(schedule: Plan, last_scan: datetime) -> ScanSchedule:
    interval = schedule.interval
    return ScanSchedule(interval, last_scan + interval, schedule.promise, schedule.stale_within)


def marks_deletions(ctx: SourceContext, stream: Stream) -> bool:
    """Whether this scan reads the resource whole, so that what it does not see was deleted
    (`pipelines/deletions.py`): lesson comments only when all are read, not those of `course_ids`."""
    if stream.name == "lesson_comments" and ctx.settings.course_ids:
        return False
    return stream.marks_deletions


def batch_keys(stream: Stream, batch: Batch) -> set[tuple[str, ...]]:
    """The keys of a batch's records, as text (how `pipelines/deletions.py` compares them)."""
    from_records = iter(key_paths(stream))  # the API paths of the key columns not added by the reader
    paths = [(key,) if key in stream.extra_columns else next(from_records) for key in stream.primary_key]
    columns = [values_at(batch, path) for path in paths]
    return {tuple(str(value) for value in key) for key in zip(*columns, strict=True)}


def is_due(last_scan: datetime, interval: timedelta, now: datetime) -> bool:
    """Due once `interval` has passed, and whenever the clock reads earlier than the last scan."""
    return not (last_scan <= now < last_scan + interval)


def stamped_time(stamps: Mapping[str, str], resource: str) -> datetime | None:
    """The time kept for `resource` in one of the state's ISO time tables, if any."""
    value = stamps.get(resource)
    if not value:
        return None
    parsed = pendulum.parse(value)
    assert isinstance(parsed, datetime)
    return parsed


def not_due_reason(last_scan: datetime, schedule: Plan) -> str:
    return (
        f"last full scan {minute(last_scan)}, next after {minute(last_scan + schedule.interval)}; "
        f"{schedule.promise}"
    )


def minute(moment: datetime) -> str:
    return pendulum.instance(moment).in_timezone("UTC").format("YYYY-MM-DD HH:mm [UTC]")


def _table_is_loaded(stream: Stream) -> bool:
    """A table dropped since its last scan (`refresh="drop_resources"`, `dlt pipeline drop`) is read again."""
    return stream.name in dlt.current.source().schema.tables


class CountingClient(PlatformClient):
    """The source's client as one scan sees it: the same client, with the scan's requests counted.

    Counted here rather than from the client's per-operation counts, which other resources share (the
    product snapshots walk `list_products` while `products` does). A page is one request; retries of a
    request are not counted, nor a page asked again (the same operation, parameters and page number,
    as a walk made again because the list moved asks), as they are no part of what the scan needs.
    Every request, a page asked again included, is also spent on the run's `purpose` (`RequestSplit`).
    """

    def __init__(
        self, client: PlatformClient, split: RequestSplit, purpose: str, tail: Span | None = None
    ) -> None:
        self._client = client  # a view of `client`: no super().__init__
        self._asked: set[tuple[object, ...]] = set()
        self._split = split
        self._purpose = purpose
        # `tail`: the lists are walked from their end (`walking.walk_tail`): the server's first page
        # number and the last page the previous read saw
        self.tail = tail
        self.span: Span | None = None  # the first and last page numbers its walks yielded

    def saw_page(self, number: int) -> None:
        """Note a page number a walk yielded."""
        span = self.span
        self.span = (number, number) if span is None else (min(span[0], number), max(span[1], number))

    @property
    def requests(self) -> int:
        """The distinct requests the scan made so far."""
        return len(self._asked)

    def count(self, operation_name: str, *parts: object) -> None:
        """Count one request of the scan, unless the same one was counted already."""
        self._split.spend(self._purpose)
        self._asked.add((operation_name, *(_frozen(part) for part in parts)))

    def request(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        json: Any = None,
    ) -> Any:
        self.count(operation_name, path_params, params, json)
        return self._client.request(operation_name, path_params, params, json)

    def paginate(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        distinct: bool = False,
    ) -> Iterator[Page]:
        for page in self._client.paginate(operation_name, path_params, params, distinct):
            self.count(operation_name, path_params, params, page.page)
            yield page

    def paged(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
    ) -> PagedList:
        listing = self._client.paged(operation_name, path_params, params)
        return CountedList(listing, self, (path_params, params))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class CountedList(PagedList):
    """A paged list of the scan's client (`CountingClient.paged`): each page its walk yields counted."""

    def __init__(
        self, listing: PagedList, scan: CountingClient, query: tuple[object, object]
    ) -> None:  # a view: no super().__init__
        self._listing = listing
        self._scan = scan
        self._request = query
        self.operation = listing.operation

    def fetch(self, number: int, first_attempt: int = 1) -> RawPage:
        return self._listing.fetch(number, first_attempt)

    def retry_malformed(self, error: MalformedResponseError, attempt: int) -> None:
        self._listing.retry_malformed(error, attempt)

    def envelope(self, raw: RawPage) -> Page:
        return self._listing.envelope(raw)

    def json_page(self, number: int) -> Page:
        return self._listing.json_page(number)

    def walk(self, fetch: Callable[[int], P], distinct: bool = False) -> Iterator[P]:
        tail = self._scan.tail
        pages = self._listing.walk(fetch, distinct) if tail is None else self._listing.walk_tail(fetch, *tail)
        for page in pages:
            self._scan.count(self.operation.name, *self._request, page.page)
            self._scan.saw_page(page.page)
            yield page


def _frozen(value: object) -> object:
    """A hashable form of a request's parameters."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(key), _frozen(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(item) for item in value)
    return value if isinstance(value, str | int | float | bool | type(None)) else repr(value)
