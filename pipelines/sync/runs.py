"""The run-outcomes table `_platform_sync_runs` in the raw dataset: one row per resource per run.

Columns: `run_started_at` (timestamp: the run's one stamp, `runclock.RunClock.stamp`), `resource`,
`status` (`loaded`, `not_due`, `skipped`, `failed`), `message` (the reason, or the rows loaded),
`requests` (bigint: requests made with the resource's operation), `our_started_at` (timestamp: the start
of the run by our clock) and `clock_skew_seconds` (double: the API's clock minus ours at its first answer;
null when no answer told it). Monitoring and the dashboard read it to see what each scheduled run did;
the latest run is the one with the greatest `run_started_at`.

`run_started_at` is on the same clock as `_platform_freshness`'s times and the community snapshots: ours,
unless the API's clock (its `Date` header) differs from ours by more than `clock_tolerance_seconds`, in
which case the API's. A run made while our clock was a year ahead is stamped with the API's time, so it
never wins "latest run" once our clock is fixed; `our_started_at` and `clock_skew_seconds` keep the
disagreement with the data.

It is loaded after the sync by a small pipeline of its own (`platform_sync_runs`, same destination and
dataset, its own schema): the sync pipeline's trace (`dlt pipeline platform_sync trace`) stays the
sync's, and a `--full-refresh` or `dlt pipeline platform_sync drop` of the source never drops the
history. The caller holds the run lock, so this load is covered by it too.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

import dlt

from pipelines.sync.companion import companion_pipeline, run_companion
from pipelines.sync.coverage import COVERAGE_COLUMNS, COVERAGE_TABLE
from pipelines.sync.platform_pipeline import SyncResult
from pipelines.sync.run_history import RUNS_TABLE
from sources.platform.freshness import FRESHNESS_COLUMNS, FRESHNESS_TABLE
from sources.platform.resources import STREAMS

logger = logging.getLogger("platform_sync.runs")

RUNS_PIPELINE = "platform_sync_runs"
STATUSES = ("loaded", "not_due", "skipped", "failed")
RUNS_COLUMNS: dict[str, Any] = {
    "run_started_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "resource": {"data_type": "text", "nullable": False},
    "status": {"data_type": "text", "nullable": False},
    "message": {"data_type": "text", "nullable": True},
    "requests": {"data_type": "bigint", "nullable": False},
    # null in rows written before these columns existed
    "our_started_at": {"data_type": "timestamp", "timezone": True, "nullable": True},
    "clock_skew_seconds": {"data_type": "double", "nullable": True},
}


def outcome_rows(
    result: SyncResult, resources: Sequence[str] | None, started_at: dt.datetime
) -> list[dict[str, Any]]:
    """One row per resource the run was asked for (all by default), in the order of `STREAMS`.

    `started_at`: the start of the run by our clock, as the caller took it; the rows are stamped with the
    run's clock (`RunClock.stamp`, module docstring) when the source made one, else with `started_at`
    (a run that failed before its source existed)."""
    requests = result.requests
    stamp, ours, skew = started_at, started_at, None
    clock = result.report.run_clock
    if clock is not None:
        stamp, skew = clock.stamp(), clock.skew_seconds()
        ours = dt.datetime.fromtimestamp(clock.started_at.timestamp(), dt.UTC)
    rows: list[dict[str, Any]] = []
    for name in resources or list(STREAMS):
        status, message = _status(result, name)
        rows.append(
            {
                "run_started_at": stamp,
                "resource": name,
                "status": status,
                "message": message,
                "requests": int(requests.get(STREAMS[name].operation, 0)),
                "our_started_at": ours,
                "clock_skew_seconds": skew,
            }
        )
    return rows


def _status(result: SyncResult, name: str) -> tuple[str, str]:
    report = result.report
    if name in report.failed:
        return "failed", report.failed[name]
    if name in report.skipped:
        return "skipped", report.skipped[name]
    if name in report.not_due:
        return "not_due", report.not_due[name]
    return "loaded", f"{result.rows.get(name, 0)} rows"


def record_run(
    pipeline: dlt.Pipeline,
    rows: list[dict[str, Any]],
    freshness: Sequence[dict[str, Any]] = (),
    coverage: Sequence[dict[str, Any]] = (),
    retired: Sequence[dict[str, Any]] = (),
) -> bool:
    """Append the run's outcomes to `_platform_sync_runs` in the sync's destination and dataset, and
    merge each table's freshness into `_platform_freshness` (one row per table, the latest run's view);
    replace `_platform_sales_coverage` (`coverage.py`).

    `retired` is not written: `_platform_retired_ids` belongs to the sync's own load since issue 53 (the
    `sales` resource writes it with the state, `sources/platform/retired.py`), and a second writer would
    load into a table a `--full-refresh` dropped. The argument stays for the callers.

    A failure here is logged and reported as False: the sync itself is done and its exit status stands.
    """
    # one per synced pipeline: accounts synced at once in one process (`--all-accounts`) share a pipelines
    # folder, and one working folder for all lost one account's records (issue 32)
    runs = companion_pipeline(f"{pipeline.pipeline_name}_runs", pipeline)  # platform_sync_runs by default
    resources = [dlt.resource(rows, name=RUNS_TABLE, write_disposition="append", columns=RUNS_COLUMNS)]
    if freshness:
        resources.append(
            dlt.resource(
                list(freshness),
                name=FRESHNESS_TABLE,
                write_disposition="merge",
                primary_key="table_name",
                columns=FRESHNESS_COLUMNS,
            )
        )
    if coverage:
        resources.append(
            dlt.resource(
                list(coverage),
                name=COVERAGE_TABLE,
                write_disposition="replace",
                primary_key="channel",
                columns=COVERAGE_COLUMNS,
            )
        )
    try:
        run_companion(runs, resources, schema=dlt.Schema(RUNS_PIPELINE))
    except Exception as exc:  # the outcome table must never turn a finished sync into a crash
        logger.warning("could not record the run's outcomes in %s: %s", RUNS_TABLE, exc)
        return False
    return True


def run_started_at() -> dt.datetime:
    """Now by our clock, in UTC, to the microsecond: the start of a run, before its source exists."""
    return dt.datetime.now(dt.UTC)
