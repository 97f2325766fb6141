"""Full-scan resources are read again only once their last complete scan is `rescan_hours` old.

The API has no update filter for these resources (`Stream.full_scan`), so reading one costs as much in a
run with nothing new as in the first run. The time of each resource's last complete scan is kept in the
source's dlt state and written only after the last page was yielded: dlt commits that state in the same
load package as the rows, so a scan that failed or was killed is never taken for a complete one and is
repeated by the next run. (Not in the resource's own state: dlt empties that at the start of every run
for `replace` resources, such as the product snapshots.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta

import dlt
import pendulum

from sources.platform.batches import Batch
from sources.platform.guard import keep_replaced_table
from sources.platform.readers import SourceContext
from sources.platform.streams import Stream

# Source state key: resource name -> ISO time of the start of the run of its last complete scan.
LAST_SCANS_KEY = "last_full_scan_at"


def scan_when_due(ctx: SourceContext, stream: Stream, scan: Callable[[], Iterator[Batch]]) -> Iterator[Batch]:
    """Run `scan` if the resource is due (or `rescan` forces it), else report it not due and read nothing."""
    last_scans: dict[str, str] = dlt.current.source_state().setdefault(LAST_SCANS_KEY, {})
    # The run's start, not the scan's end, is what is recorded and compared: a run scheduled every
    # `rescan_hours` then rescans every time, however long the scan itself took.
    run_started_at = ctx.snapshot_at
    last_scan = last_full_scan(last_scans, stream.name)
    interval = timedelta(hours=ctx.settings.rescan_interval_hours(stream.name))
    if (
        last_scan is not None
        and not ctx.settings.rescan
        and not is_due(last_scan, interval, run_started_at)
        and _table_is_loaded(stream)
    ):
        ctx.report.mark_not_due(stream.name, not_due_reason(last_scan, interval))
        keep_replaced_table(stream)
        return
    yield from scan()
    # Reached only when the scan ran to its end: an exception leaves the previous complete scan's time.
    last_scans[stream.name] = run_started_at.isoformat()


def is_due(last_scan: datetime, interval: timedelta, now: datetime) -> bool:
    """Due once `interval` has passed, and whenever the clock reads earlier than the last scan."""
    return not (last_scan <= now < last_scan + interval)


def last_full_scan(last_scans: Mapping[str, str], resource: str) -> datetime | None:
    value = last_scans.get(resource)
    if not value:
        return None
    parsed = pendulum.parse(value)
    assert isinstance(parsed, datetime)
    return parsed


def not_due_reason(last_scan: datetime, interval: timedelta) -> str:
    return f"last full scan {_minute(last_scan)}, next after {_minute(last_scan + interval)}"


def _minute(moment: datetime) -> str:
    return pendulum.instance(moment).in_timezone("UTC").format("YYYY-MM-DD HH:mm [UTC]")


def _table_is_loaded(stream: Stream) -> bool:
    """A table dropped since its last scan (`refresh="drop_resources"`, `dlt pipeline drop`) is read again."""
    return stream.name in dlt.current.source().schema.tables
