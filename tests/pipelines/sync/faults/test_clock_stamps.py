"""A wrong clock leaves no marks (issue 26): the run records, the freshness table and the community
snapshots of one run share one stamp, the API's time when our clock disagrees with it beyond
`clock_tolerance_seconds`, and the disagreement is kept in `_platform_sync_runs`.

The sandbox dates its answers by its world's clock, which stands at June 2026 while the machine's says
November: in the sandbox our clock is months ahead of the API's, as a machine whose clock ran ahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dlt
import duckdb

from dashboard.pages.health import last_run
from pipelines.sync.platform_pipeline import SyncResult
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sources.platform.report import RunReport
from sources.platform.resources import STREAMS
from sources.platform.runclock import RunClock
from sources.platform_client.servertime import ServerTime
from tests.support.faults import database_of, pipeline_in, run, world
from tests.support.scan_budget import FANS_WAIT

RUN_COLUMNS = "run_started_at, our_started_at, clock_skew_seconds"
FANS = {name for name, stream in STREAMS.items() if stream.fans_out}


def sync_and_record(pipeline: dlt.Pipeline, handle: Any, **options: Any) -> tuple[datetime, SyncResult]:
    """One run as the command makes it: our start, the sync, its records."""
    started = run_started_at()
    result = run(pipeline, handle, **{**FANS_WAIT, **options})  # the fans are not due in a second run
    assert result.report.failed == {} and result.report.skipped == {}, result.report.failed
    assert record_run(pipeline, outcome_rows(result, None, started), result.freshness, result.coverage)
    return started, result


def rows(database: str, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(database, read_only=True) as connection:
        connection.execute("set schema 'platform_raw'")
        return connection.execute(sql).fetchall()


class DuckSession:
    """The dashboard's `Session` over one DuckDB file (its pages' queries, unchanged)."""

    def __init__(self, database: str) -> None:
        self.database = database

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with duckdb.connect(self.database, read_only=True) as connection:
            return connection.execute(sql, list(params)).fetchall()

    def tables(self, schema: str) -> set[str]:
        sql = "select table_name from information_schema.tables where table_schema = ?"
        return {name for (name,) in self.rows(sql, [schema])}


def latest_run_line(database: str) -> str:
    """The dashboard's "latest run" (health page): the summary line over the newest run's rows."""
    session = DuckSession(database)
    summary = last_run(session, "platform_raw", session.tables("platform_raw"))[0]
    return str(summary.children)


def test_a_run_far_from_the_apis_clock_is_stamped_with_its_time_and_a_run_that_agrees_is_latest(tmp_path):
    pipeline = pipeline_in(tmp_path)
    database = database_of(pipeline)
    with world() as handle:
        world_clock = datetime.fromisoformat(handle.catalog()["clock"].replace("Z", "+00:00"))
        started, first = sync_and_record(pipeline, handle)
        ended = datetime.now(UTC)
        # The clocks counted as agreeing: a tolerance wider than their difference (the machine's clock
        # cannot be moved back months in a test); the stamp is then ours.
        second_started, second = sync_and_record(pipeline, handle, clock_tolerance_seconds=400 * 86400)
        second_ended = datetime.now(UTC)

    runs = rows(database, f"select distinct {RUN_COLUMNS} from _platform_sync_runs order by 1")
    assert len(runs) == 2  # one stamp, one start and one skew per run
    (stamp, ours, skew), (second_stamp, second_ours, second_skew) = runs
    clock = first.report.run_clock
    assert clock is not None and clock.disagrees()
    # The first run: the API's time (its world stands still; our clock measured at most the run since its
    # first answer), our start kept beside it, and the API's clock minus ours at its first answer.
    assert stamp == clock.stamp()
    assert world_clock - timedelta(seconds=1) <= stamp <= world_clock + (ended - started)
    assert ours == clock.started_at and started <= ours <= ended
    assert skew == clock.skew_seconds()
    assert (world_clock - ended).total_seconds() - 1 <= skew <= (world_clock - started).total_seconds()
    # The second: agreeing, so stamped by our clock at its start; the disagreement is still recorded.
    assert second_stamp == second_ours and second_started <= second_ours <= second_ended
    assert second_skew is not None and second_skew < -100 * 86400
    assert second_stamp > stamp
    stamps = [at for (at,) in rows(database, "select run_started_at from _platform_sync_runs")]
    assert (stamps.count(stamp), stamps.count(second_stamp)) == (len(STREAMS), len(STREAMS))

    # The freshness table is on the runs' clock: each table read in a run has that run's stamp; the fans,
    # scanned by the first and not due in the second (their schedule runs on our clock), the first's.
    freshness = {
        name: (read, scan, checked)
        for name, read, scan, checked in rows(
            database,
            "select table_name, last_read_at, last_full_scan_at, checked_at from _platform_freshness",
        )
    }
    assert set(freshness) == set(STREAMS)
    assert FANS and FANS == set(second.report.not_due)
    for name, (read, scan, checked) in freshness.items():
        expected = stamp if name in FANS else second_stamp
        assert read == expected, name
        assert scan == (expected if STREAMS[name].full_scan else None), name
        assert second_stamp <= checked <= second_ended, name  # the second run's, on its (our) clock
    first_checked = {row["table_name"]: row["checked_at"] for row in first.freshness}
    assert all(stamp <= at <= world_clock + (ended - started) for at in first_checked.values())

    # The community snapshots: taken by the first run (a fan, not due in the second), with its stamp.
    assert "community_top_posts" in FANS
    snapshots = rows(database, "select distinct snapshot_at from community_top_posts order by 1")
    assert snapshots == [(stamp,)]

    # "Latest run" as the dashboard computes it: the second.
    assert latest_run_line(database) == (
        f"Run started {str(second_stamp)[:19]} UTC: 0 resource(s) skipped or failed."
    )


def clock_of(ours: datetime, api: datetime) -> RunClock:
    """A run's clock: ours started at `ours`, the API's first answer dated `api` arriving at once (by
    our clock, `ours`: a faked clock of ours, for the stamp measures the time since by the real one)."""
    readings = ServerTime()
    readings.observe(api.strftime("%a, %d %b %Y %H:%M:%S GMT"), ours)
    return RunClock(ours, readings, timedelta(seconds=300))


def record(pipeline: dlt.Pipeline, clock: RunClock, started: datetime) -> None:
    report = RunReport()
    report.run_clock = clock
    result = SyncResult(load_info=None, rows={}, requests={}, seconds={}, report=report)
    assert record_run(pipeline, outcome_rows(result, None, started))


def test_a_run_made_while_our_clock_was_a_year_ahead_never_wins_latest_once_it_is_fixed(tmp_path: Path):
    """Our clock a year ahead of the API's, then set right: the wrong run is stamped with the API's time,
    an hour before the next run's; by our clock it would be the latest for a year."""
    pipeline = pipeline_in(tmp_path)
    wrong = datetime.now(UTC).replace(microsecond=0)  # our clock, a year ahead
    right = wrong - timedelta(days=365)  # the API's clock, and the truth
    record(pipeline, clock_of(wrong, right), wrong)
    fixed = right + timedelta(hours=1)
    record(pipeline, clock_of(fixed, fixed), fixed)

    runs = rows(database_of(pipeline), f"select {RUN_COLUMNS} from _platform_sync_runs order by 1")
    assert len(runs) == 2 * len(STREAMS)
    (stamp, ours, skew), (fixed_stamp, fixed_ours, fixed_skew) = runs[0], runs[-1]
    assert right <= stamp < right + timedelta(minutes=1) and ours == wrong
    assert skew == -365 * 86400
    assert (fixed_stamp, fixed_ours, fixed_skew) == (fixed, fixed, 0)
    assert latest_run_line(database_of(pipeline)) == (
        f"Run started {str(fixed)[:19]} UTC: 0 resource(s) skipped or failed."
    )
