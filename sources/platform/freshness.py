"""How fresh each table is: when a run last read it whole or incrementally, and what is not yet fetched.

The source notes in its dlt state when each resource was last read to its end (`note_complete_read`),
committed with the rows like every other state; `table_freshness` turns that state and the run's report
into one row per table for `_platform_freshness` and for the run's summary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pendulum

from sources.platform.report import RunReport, SalesCycle, ScanSchedule
from sources.platform.rescan import LAST_SCANS_KEY, SCAN_COSTS_KEY, SCAN_STAMPS_KEY, stamped_time
from sources.platform.resources import STREAMS
from sources.platform.resources.store_sale_ids import pending_sale_ids

# Source state key: resource name -> ISO time of the start of the last run that read it to its end, as the
# run's stamp (`runclock.RunClock.stamp`: on the clock of the run records; read for display only).
LAST_READS_KEY = "last_read_at"

FRESHNESS_TABLE = "_platform_freshness"
EVERY_RUN = "full scan, read every run"  # the `refresh` of a whole list read on every run
FRESHNESS_COLUMNS: dict[str, Any] = {
    "table_name": {"data_type": "text", "nullable": False, "primary_key": True},
    "refresh": {"data_type": "text", "nullable": False},
    # The promise: how long a change on the platform may take to reach the table at this budget and
    # schedule (`scan_budget.Plan.stale_within`; the incremental tables: one run interval).
    "stale_within_hours": {"data_type": "double", "nullable": True},
    "last_read_at": {"data_type": "timestamp", "timezone": True, "nullable": True},
    "last_full_scan_at": {"data_type": "timestamp", "timezone": True, "nullable": True},
    "last_scan_requests": {"data_type": "bigint", "nullable": True},
    "next_full_scan_after": {"data_type": "timestamp", "timezone": True, "nullable": True},
    "not_fetched": {"data_type": "bigint", "nullable": False},
    "not_fetched_minutes": {"data_type": "double", "nullable": True},
    "not_fetched_runs": {"data_type": "bigint", "nullable": True},
    "checked_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    # The re-verification cycle of `sales` (null in the other rows; docs/contracts.md part 4).
    "known_records": {"data_type": "bigint", "nullable": True},
    "reverified": {"data_type": "bigint", "nullable": True},
    "reverify_per_run": {"data_type": "bigint", "nullable": True},
    "oldest_verified_at": {"data_type": "timestamp", "timezone": True, "nullable": True},
    "reverify_cycle_runs": {"data_type": "bigint", "nullable": True},
    "reverify_cycle_days": {"data_type": "double", "nullable": True},
}
CYCLE_COLUMNS = (
    "known_records",
    "reverified",
    "reverify_per_run",
    "oldest_verified_at",
    "reverify_cycle_runs",
    "reverify_cycle_days",
)


def note_complete_read(resource: str, report: RunReport, note_stamp: Callable[[str, str], None]) -> None:
    """Record that `resource` was read to its end in this run (not failed, skipped or not due), with the
    run's stamp (`note_stamp`: `SourceContext.note_stamp`)."""
    if resource in report.failed or resource in report.skipped or resource in report.not_due:
        return
    note_stamp(LAST_READS_KEY, resource)


def table_freshness(
    source_state: Mapping[str, Any],
    report: RunReport,
    resources: Iterable[str],
    checked_at: datetime,
    verification: tuple[int, datetime | None] | None = None,
) -> list[dict[str, Any]]:
    """One row per resource of `resources` from the source's committed state (`pipeline.state`'s
    `sources.platform`) and the run's report; `verification`: the rows of `sales` and their oldest
    `verified_at`, as the destination holds them after the run; `checked_at`: now on the run's clock.

    The times are the stamps of the runs that read or scanned (`runclock.RunClock.stamp`), on the clock
    of `_platform_sync_runs.run_started_at`; a scan recorded before the stamps were kept shows its time
    by our clock (`LAST_SCANS_KEY`), which schedules the scans."""
    reads = source_state.get(LAST_READS_KEY, {})
    scans = {**source_state.get(LAST_SCANS_KEY, {}), **source_state.get(SCAN_STAMPS_KEY, {})}
    costs = source_state.get(SCAN_COSTS_KEY, {})
    rows = []
    for name in resources:
        stream = STREAMS[name]
        row: dict[str, Any] = {
            "table_name": name,
            "refresh": "incremental",
            "stale_within_hours": None,
            "last_read_at": stamped_time(reads, name),
            "last_full_scan_at": None,
            "last_scan_requests": None,
            "next_full_scan_after": None,
            "not_fetched": 0,
            "not_fetched_minutes": None,
            "not_fetched_runs": None,
            "checked_at": checked_at,
            **dict.fromkeys(CYCLE_COLUMNS),
        }
        if not stream.full_scan and report.run_interval is not None:
            row["stale_within_hours"] = report.run_interval.total_seconds() / 3600  # read every run
        if stream.full_scan:
            schedule = report.scans.get(name)
            row["refresh"] = _refresh(schedule)
            if schedule is not None and schedule.stale_within is not None:
                row["stale_within_hours"] = schedule.stale_within.total_seconds() / 3600
            row["last_full_scan_at"] = stamped_time(scans, name)
            row["last_scan_requests"] = costs.get(name)
            if schedule is not None and schedule.interval and row["last_full_scan_at"] is not None:
                # on the clock of `last_full_scan_at`; the schedule itself runs on ours (`rescan.py`)
                row["next_full_scan_after"] = row["last_full_scan_at"] + schedule.interval
        if name == "sales":
            known = verification[0] if verification is not None else 0
            row.update(_sales_backlog(source_state.get("resources", {}).get("sales", {}), report, known))
            row.update(_sales_cycle(report.sales_cycle, verification, report.run_interval))
            if row["reverify_cycle_runs"] is not None and report.run_interval is not None:
                # a change to a known sale waits for its re-verification, at most one cycle
                cycle = row["reverify_cycle_runs"] * report.run_interval.total_seconds() / 3600
                row["stale_within_hours"] = cycle
        rows.append(row)
    return rows


def _refresh(schedule: ScanSchedule | None) -> str:
    if schedule is None:
        return "full scan, on the next run"  # not scanned this run (failed, skipped): its next run scans
    if schedule.promise:
        return f"full scan, {schedule.promise}"
    if not schedule.interval:
        return EVERY_RUN
    return f"full scan, every {schedule.interval.total_seconds() / 3600:g} h"


def _sales_backlog(sales_state: Mapping[str, Any], report: RunReport, known: int) -> dict[str, Any]:
    """The discovered sale ids not fetched yet, and how long they take at the rate limit and per run
    (at the budget but what the re-verification cycle keeps of it, as many as there are known sales)."""
    waiting = len(pending_sale_ids(sales_state))
    pace = report.sale_details_pace
    minutes = runs = None
    if waiting and pace is not None:
        kept = min(report.sales_cycle.per_run, known) if report.sales_cycle is not None else 0
        runs = math.ceil(waiting / max(1, pace.max_requests_per_run - kept))
        if pace.requests_per_minute:
            minutes = waiting / pace.requests_per_minute
    return {"not_fetched": waiting, "not_fetched_minutes": minutes, "not_fetched_runs": runs}


def _sales_cycle(
    cycle: SalesCycle | None,
    verification: tuple[int, datetime | None] | None,
    interval: timedelta | None,
) -> dict[str, Any]:
    """How often every known sale is fetched again: the cycle's share per run, in runs and in days at
    the run's interval (`run_budget.RunBudget.interval`, the one every budget of the run is set by)."""
    known, oldest = verification if verification is not None else (None, None)
    row: dict[str, Any] = {"known_records": known, "oldest_verified_at": oldest}
    if cycle is None:
        return row
    row["reverified"] = cycle.reverified
    row["reverify_per_run"] = cycle.per_run
    if cycle.per_run and known is not None:
        runs = max(1, math.ceil(known / cycle.per_run))
        row["reverify_cycle_runs"] = runs
        if interval is not None:
            row["reverify_cycle_days"] = runs * interval.total_seconds() / 86400
    return row


def cycle_line(row: Mapping[str, Any]) -> str | None:
    """The summary's line on the sales re-verification cycle, from the `sales` row."""
    runs = row.get("reverify_cycle_runs")
    if runs is None:
        return None
    days = row.get("reverify_cycle_days")
    at_schedule = f" (about {days:.3g} days at this schedule)" if days is not None else ""
    oldest = row.get("oldest_verified_at")
    since = f"; oldest verification {oldest.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if oldest else ""
    return (
        f"sales: every known sale ({row['known_records']:,}) re-checked at least every {runs} "
        f"run{'s' if runs != 1 else ''}{at_schedule}, {row['reverify_per_run']:,} a run "
        f"(sales_reverify_share); {row['reverified']:,} re-verified this run{since}"
    )


def freshness_lines(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The summary's lines: how often the full scans are read (`scan_budget.Plan.promise`), the sales'
    re-verification cycle, and what is not fetched yet."""
    lines = []
    by_promise: dict[str, list[str]] = {}
    for row in rows:
        promise = row["refresh"].removeprefix("full scan, ")
        if promise != row["refresh"] and row["last_scan_requests"] is not None:
            by_promise.setdefault(promise, []).append(f"{row['table_name']} ({row['last_scan_requests']})")
    for promise, names in by_promise.items():
        lines.append(f"full scans {promise} (requests a scan): {', '.join(names)}")
    for row in rows:
        if line := cycle_line(row):
            lines.append(line)
        if row["not_fetched"]:
            eta = ""
            if row["not_fetched_minutes"] is not None:
                eta = f": {_duration(row['not_fetched_minutes'])} of requests at the rate limit"
            runs = row["not_fetched_runs"]
            lines.append(
                f"{row['table_name']}: {row['not_fetched']:,} discovered records not fetched yet{eta}, "
                f"{runs} more run{'s' if runs != 1 else ''} at the run's budget of sale details"
            )
    return lines


def _duration(minutes: float) -> str:
    return pendulum.duration(minutes=math.ceil(minutes)).in_words(locale="en")
