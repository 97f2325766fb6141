"""A warehouse behind its working folder (issue 53): the DuckDB file copied back from an earlier backup,
or a load lost after its state was kept locally. The working folder's cursors are then ahead of the data,
and the rows between were missing for good (1 subscription with its child rows, 3 sales, 2 attendees, in
the issue), with exit 0 and no word. The run now compares the two states, goes on from the warehouse's,
says so in one line, and ends exact against a fresh sync of the same world."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from tests.support.faults import SCALE, SEED, TIME_SCALE, database_of, pipeline_in
from tests.support.sync_helpers import source_options
from tests.support.warehouses import integrity_problems, rows_by_record

QUARTER = 90 * 86400  # at this scale, a few new subscriptions, sales, documents and attendees


def assert_same_records(ours: str, fresh: str) -> None:
    """Every record of a fresh sync is in `ours` and none more, in every table, without duplicate or
    orphan. (Values may differ within the freshness promise: a renewal that fell due an hour ago shows
    after it is paid; a run that never lost its backup differs from a fresh sync the same way.)"""
    assert integrity_problems(ours) == []
    mine, theirs = rows_by_record(ours, True), rows_by_record(fresh, True)
    assert mine.keys() == theirs.keys()
    for table, records in theirs.items():
        missing = sorted(records.keys() - mine[table].keys())
        extra = sorted(mine[table].keys() - records.keys())
        assert (table, missing, extra) == (table, [], [])


def test_a_warehouse_restored_from_a_backup_goes_on_from_its_own_state(tmp_path: Path, caplog) -> None:
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=TIME_SCALE) as sandbox:
        options = source_options(sandbox, sandbox.token())
        pipeline = pipeline_in(tmp_path / "ours")
        sync(pipeline, source_options=options)
        backup = tmp_path / "backup.duckdb"
        shutil.copy(database_of(pipeline), backup)

        sandbox.advance(QUARTER)  # new records, and changes to old ones
        sync(pipeline, source_options=options)
        shutil.copy(backup, database_of(pipeline))  # the backup put back; the working folder kept

        sandbox.advance(3600)
        caplog.clear()
        # `rescan`: the lists read whole are read now, not when due; the incremental cursors are the question
        restored = sync(pipeline, source_options={**options, "rescan": True})
        assert restored.report.failed == {}
        said = [r.getMessage() for r in caplog.records if "behind" in r.getMessage()]

        fresh = pipeline_in(tmp_path / "fresh")
        sync(fresh, source_options=options)
        assert_same_records(database_of(pipeline), database_of(fresh))
        assert len(said) == 1 and "restored from a backup" in said[0], said
        # The next run is an ordinary one: the states agree.
        caplog.clear()
        sync(pipeline, source_options={**options, "rescan": True})
        assert not [r for r in caplog.records if "behind" in r.getMessage()]
