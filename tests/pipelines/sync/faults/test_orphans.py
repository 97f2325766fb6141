"""A load killed half-way, then the working folder lost (issue 53: the shipped GitHub Actions workflow's
runners start empty). dlt loads a package table by table: the child tables can be in the warehouse while
their parents' rows are not, and without the package the next run loads the records again under new
row ids. Here the half-loaded package is played exactly: child rows of records whose row never landed
(their parent and root ids of no loaded row); then the folder is deleted. The rerun ends exact."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from tests.support.faults import Reference, database_of, pipeline_in, run
from tests.support.warehouses import assert_exact, integrity_problems

CHILDREN = ("subscriptions__products", "subscriptions__products__deliveries", "sales__items")


def test_child_rows_left_by_a_half_finished_load_are_removed_after_the_folder_is_lost(
    tmp_path: Path, sandbox, reference: Reference, caplog
) -> None:
    pipeline = pipeline_in(tmp_path)
    run(pipeline, sandbox)
    database = database_of(pipeline)
    with duckdb.connect(database) as connection:
        for table in CHILDREN:
            # a copy of three child rows under parents that never landed
            connection.execute(
                f"insert into platform_raw.{table} by name select * replace ("
                "'lost-' || _dlt_parent_id as _dlt_parent_id, 'lost-' || _dlt_id as _dlt_id, "
                "'lost-' || _dlt_root_id as _dlt_root_id"
                f") from platform_raw.{table} order by _dlt_id limit 3"
            )
    assert len(integrity_problems(database)) == len(CHILDREN)
    shutil.rmtree(pipeline.working_dir)

    caplog.clear()
    result = run(pipeline_in(tmp_path), sandbox)
    assert result.report.failed == {}
    assert_exact(database, reference.database)
    said = sorted(r.getMessage() for r in caplog.records if "without a parent row removed" in r.getMessage())
    assert said == sorted(
        f"{t}: 3 rows without a parent row removed (left by a load that did not finish)" for t in CHILDREN
    )
