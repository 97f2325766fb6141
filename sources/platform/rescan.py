"""When a full-scan resource is read: a cheap whole list on every run, a fan every `rescan_hours`.

The API has no update filter for these resources (`Stream.full_scan`), so reading one costs as much in a
run with nothing new as in the first run. A whole list (transfers, lesson comments, affiliations,
products, webhook origins) whose last complete scan made at most `cheap_scan_max_requests` requests is
read on every run, so that its table is as fresh as the schedule; the cost is measured, so a list that
grows past the limit waits like the others. A fan (`Stream.fans_out`: one request per product, event,
student, delivery or community) is read again only once its last complete scan is `rescan_hours` old.
A per-resource `rescan_hours_by_resource` is the user's explicit choice and wins over both.

The time and cost of each resource's last complete scan are kept in the source's dlt state and written
only after the last page was yielded: dlt commits that state in the same load package as the rows, so a
scan that failed or was killed is never taken for a complete one and is repeated by the next run. (Not
in the resource's own state: dlt empties that at the start of every run for `replace` resources, such as
the product snapshots.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

import dlt
import pendulum

from sources.platform.fastpath.batches import Batch, values_at
from sources.platform.guard import keep_replaced_table
from sources.platform.records import key_paths
from sources.platform.report import ScanSchedule
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream
from sources.platform.seen_keys import SeenKeys
from sources.platform.settings import SourceSettings
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import MalformedResponseError
from sources.platform_client.paged_list import PagedList, RawPage
from sources.platform_client.paging import Page, PagedBody

P = TypeVar("P", bound=PagedBody)

# Source state keys, by resource name: the ISO time of the start of the run of its last complete scan,
# and the number of requests that scan made.
LAST_SCANS_KEY = "last_full_scan_at"
SCAN_COSTS_KEY = "last_full_scan_requests"
# The same scans' run stamps (`runclock.RunClock.stamp`), for `_platform_freshness` only: the schedule
# compares `LAST_SCANS_KEY` with the next run's start by the same clock, ours, so a scan stamped by the
# API's clock months behind ours is not taken as months old.
SCAN_STAMPS_KEY = "last_full_scan_stamp"


def scan_when_due(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """Read the resource if it is due (or `rescan` forces it), else report it not due and read nothing."""
    state = dlt.current.source_state()
    last_scans: dict[str, str] = state.setdefault(LAST_SCANS_KEY, {})
    costs: dict[str, int] = state.setdefault(SCAN_COSTS_KEY, {})
    # The run's start, not the scan's end, is what is recorded and compared: a run scheduled every
    # `rescan_hours` then rescans every time, however long the scan itself took.
    run_started_at = ctx.snapshot_at
    last_scan = stamped_time(last_scans, stream.name)
    interval = scan_interval(ctx.settings, stream, costs.get(stream.name))
    if (
        last_scan is not None
        and not ctx.settings.rescan
        and not is_due(last_scan, interval, run_started_at)
        and _table_is_loaded(stream)
    ):
        ctx.report.schedule_scan(stream.name, ScanSchedule(interval, last_scan + interval))
        ctx.report.mark_not_due(stream.name, not_due_reason(last_scan, interval))
        keep_replaced_table(stream)
        return
    counting = CountingClient(ctx.client)
    # The copy shares the context's sets, queue and lock; a full scan produces no sale ids, so it never
    # rebinds the pending ids that `commit_pending_sales` swaps.
    keys = SeenKeys() if marks_deletions(ctx, stream) else None  # 8 bytes a record (`seen_keys.py`)
    for batch in stream.read(replace(ctx, client=counting), stream):
        if keys is not None:
            keys.extend(batch_keys(stream, batch))
        yield batch
    # Reached only when the scan ran to its end: an exception leaves the previous complete scan's time.
    if keys is not None:
        ctx.report.scan_complete(stream.name, keys)
    last_scans[stream.name] = run_started_at.isoformat()
    ctx.note_stamp(SCAN_STAMPS_KEY, stream.name)
    costs[stream.name] = counting.requests
    interval = scan_interval(ctx.settings, stream, counting.requests)
    ctx.report.schedule_scan(stream.name, ScanSchedule(interval, run_started_at + interval))


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


def scan_interval(settings: SourceSettings, stream: Stream, last_cost: int | None) -> timedelta:
    """How long a complete scan stays fresh: the resource's own `rescan_hours_by_resource` if set; no
    time at all for a whole list whose last scan made at most `cheap_scan_max_requests`; else
    `rescan_hours`."""
    if stream.name in settings.rescan_hours_by_resource:
        return timedelta(hours=settings.rescan_hours_by_resource[stream.name])
    if not stream.fans_out and last_cost is not None and last_cost <= settings.cheap_scan_max_requests:
        return timedelta(0)
    return timedelta(hours=settings.rescan_hours)


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


def not_due_reason(last_scan: datetime, interval: timedelta) -> str:
    return f"last full scan {minute(last_scan)}, next after {minute(last_scan + interval)}"


def minute(moment: datetime) -> str:
    return pendulum.instance(moment).in_timezone("UTC").format("YYYY-MM-DD HH:mm [UTC]")


def _table_is_loaded(stream: Stream) -> bool:
    """A table dropped since its last scan (`refresh="drop_resources"`, `dlt pipeline drop`) is read again."""
    return stream.name in dlt.current.source().schema.tables


class CountingClient(PlatformClient):
    """The source's client as one scan sees it: the same client, with the scan's requests counted.

    Counted here rather than from the client's per-operation counts, which other resources share (the
    product snapshots walk `list_products` while `products` does). A page is one request; retries of a
    request are not counted, as they are no part of what the scan needs.
    """

    def __init__(self, client: PlatformClient) -> None:  # a view of `client`: no super().__init__
        self._client = client
        self.requests = 0

    def request(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        json: Any = None,
    ) -> Any:
        self.requests += 1
        return self._client.request(operation_name, path_params, params, json)

    def paginate(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        distinct: bool = False,
    ) -> Iterator[Page]:
        for page in self._client.paginate(operation_name, path_params, params, distinct):
            self.requests += 1
            yield page

    def paged(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
    ) -> PagedList:
        return CountedList(self._client.paged(operation_name, path_params, params), self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class CountedList(PagedList):
    """A paged list of the scan's client (`CountingClient.paged`): each page its walk yields counted."""

    def __init__(self, listing: PagedList, scan: CountingClient) -> None:  # a view: no super().__init__
        self._listing = listing
        self._scan = scan
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
        for page in self._listing.walk(fetch, distinct):
            self._scan.requests += 1
            yield page
