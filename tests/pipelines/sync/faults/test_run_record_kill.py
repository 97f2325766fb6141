"""A run killed while its record was being loaded (issue 53). Its package waits in the run records'
working folder; dlt's `run` then loads that package and returns without extracting, so the next run's
own record was never written and `_platform_freshness` kept the killed run's view. Played exactly: the
killed run's record extracted and normalized, not loaded; then the next run records. Both are there."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dlt
import duckdb

from pipelines.sync.companion import companion_pipeline
from pipelines.sync.runs import RUNS_COLUMNS, RUNS_PIPELINE, RUNS_TABLE, record_run
from sources.platform.freshness import FRESHNESS_COLUMNS, FRESHNESS_TABLE
from tests.support.faults import database_of, pipeline_in, run


def outcome(at: dt.datetime) -> list[dict[str, object]]:
    return [
        {
            "run_started_at": at,
            "resource": "products",
            "status": "loaded",
            "message": "12 rows",
            "requests": 1,
            "our_started_at": at,
            "clock_skew_seconds": 0.0,
        }
    ]


def freshness(at: dt.datetime) -> list[dict[str, object]]:
    return [
        {
            "table_name": "products",
            "refresh": "read every run",
            "last_read_at": at,
            "not_fetched": 0,
            "checked_at": at,
        }
    ]


def test_the_run_after_a_kill_during_the_record_keeps_both_records(tmp_path: Path, sandbox) -> None:
    pipeline = pipeline_in(tmp_path)
    run(pipeline, sandbox, resources=["products"])
    killed_at = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)
    next_at = killed_at + dt.timedelta(hours=1)
    runs = companion_pipeline(f"{pipeline.pipeline_name}_runs", pipeline)
    runs.extract(
        [
            dlt.resource(
                outcome(killed_at), name=RUNS_TABLE, write_disposition="append", columns=RUNS_COLUMNS
            ),
            dlt.resource(
                freshness(killed_at),
                name=FRESHNESS_TABLE,
                write_disposition="merge",
                primary_key="table_name",
                columns=FRESHNESS_COLUMNS,
            ),
        ],
        schema=dlt.Schema(RUNS_PIPELINE),
    )
    runs.normalize()  # killed here: the package normalized, never loaded
    assert runs.has_pending_data

    assert record_run(pipeline, outcome(next_at), freshness(next_at)) is True
    with duckdb.connect(database_of(pipeline), read_only=True) as connection:
        recorded = connection.execute(
            f"select run_started_at from platform_raw.{RUNS_TABLE} order by 1"
        ).fetchall()
        fresh = connection.execute(f"select last_read_at from platform_raw.{FRESHNESS_TABLE}").fetchall()
    assert [row[0] for row in recorded] == [killed_at, next_at]
    assert [row[0] for row in fresh] == [next_at]
