"""The starts of the last runs, from the run records (`_platform_sync_runs`), for the run's budget.

The source sets every budget of a run by the interval between runs (`sources/platform/run_budget.py`). The
run records are its truth: every run that reached its end writes its rows there, a failed or partial
one too, whose state dlt did not commit (the source state's own list misses those runs, so a schedule
whose every other run failed would look twice as slow). The starts are `our_started_at`, our clock, the
one the source compares them with; the rows written before that column existed fall back to
`run_started_at`.

Asked before the source is built, through the pipeline's `sql_client()` (dlt's public API). No
destination yet, no table, no SQL: None, and the source takes the starts its state keeps.
"""

from __future__ import annotations

import logging
from datetime import datetime

import dlt

logger = logging.getLogger("platform_sync.runs")

RUNS_TABLE = "_platform_sync_runs"
KEPT_STARTS = 8  # as many as the source state keeps (`scan_budget.KEPT_RUN_STARTS`)


def recent_run_starts(pipeline: dlt.Pipeline, kept: int = KEPT_STARTS) -> list[str] | None:
    """The ISO starts of the last `kept` runs recorded in `pipeline`'s dataset, oldest first; None when
    there are no records to read."""
    try:
        with pipeline.sql_client() as client:
            table = client.make_qualified_table_name(RUNS_TABLE)
            rows = client.execute_sql(
                f"select distinct coalesce(our_started_at, run_started_at) as started from {table} "
                f"order by started desc limit {int(kept)}"
            )
    except Exception as exc:  # no destination, no table yet, a destination without SQL
        logger.debug("no run records to measure the interval from (%s)", exc)
        return None
    starts = sorted(row[0] for row in rows or [] if isinstance(row[0], datetime))
    return [start.isoformat() for start in starts] or None
