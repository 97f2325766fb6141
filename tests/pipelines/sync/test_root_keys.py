"""A warehouse whose community snapshots were appended (before 2026-12-06) syncs on now that they are
merged (`pipelines/sync/root_keys.py`): dlt's merge adds `_dlt_root_id` NOT NULL to the child tables,
which failed every load of such a warehouse ("NOT NULL constraint failed"); the column is added first,
filled, and the old and new snapshots keep every child row under its root."""

from __future__ import annotations

from pathlib import Path

import dlt
import pytest

from pipelines.sync.root_keys import MERGED_SINCE_APPEND, ROOT_KEY
from sandbox.running import SandboxHandle
from sources.platform import platform_source
from tests.support.faults import run, world
from tests.support.postgres_server import PostgresServer
from tests.support.sync_helpers import source_options

CHILD = "community_commenters__posts"


def _as_before(pipeline: dlt.Pipeline, handle: SandboxHandle) -> None:
    """A first sync as the version before made it: the snapshot streams appended."""
    source = platform_source(**source_options(handle, handle.token()))
    for name in MERGED_SINCE_APPEND:
        source.resources[name].apply_hints(write_disposition="append")
    pipeline.run(source)


def _upgrade_then_check(pipeline: dlt.Pipeline) -> None:
    with world() as handle:
        _as_before(pipeline, handle)
        with pipeline.sql_client() as client:
            before = client.execute_sql(f"select count(*) from {client.make_qualified_table_name(CHILD)}")[0][
                0
            ]
            assert before > 0
        handle.advance(20 * 86_400.0)
        result = run(pipeline, handle, rescan=True)
    assert result.report.failed == {}
    with pipeline.sql_client() as client:
        child = client.make_qualified_table_name(CHILD)
        root = client.make_qualified_table_name("community_commenters")
        rows = client.execute_sql(
            f"select count(*), count(c.{ROOT_KEY}), count(r._dlt_id), count(distinct r.snapshot_at) "
            f"from {child} as c left join {root} as r on r._dlt_id = c.{ROOT_KEY}"
        )
    total, with_key, under_a_root, snapshots = rows[0]
    assert total > before and with_key == total and under_a_root == total and snapshots == 2
    assert pipeline.default_schema.tables["community_commenters"]["write_disposition"] == "merge"


def test_a_duckdb_warehouse_with_appended_snapshots_syncs_on(tmp_path: Path) -> None:
    pipeline = dlt.pipeline(
        pipeline_name="platform_sync",
        destination=dlt.destinations.duckdb(str(tmp_path / "warehouse.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    _upgrade_then_check(pipeline)


@pytest.mark.xdist_group("postgres")
def test_a_postgres_warehouse_with_appended_snapshots_syncs_on(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    postgres_server.create_database("root_keys")
    pipeline = dlt.pipeline(
        pipeline_name="platform_sync",
        destination=dlt.destinations.postgres(postgres_server.credentials("root_keys")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    _upgrade_then_check(pipeline)
