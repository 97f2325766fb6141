"""Row ids: rows packed as Arrow tables (`fastpath/columnar.py`) bring their own `_dlt_id`, so that dlt
loads their extracted files as they are; the column must still be what dlt's normalizer makes it."""

from __future__ import annotations

import dlt

from pipelines.sync.platform_pipeline import sync
from sources.platform import platform_source
from tests.support.sync_helpers import query, source_options, warehouse_tables


def test_every_table_has_dlt_row_ids_declared_and_unique(sandbox, make_pipeline):
    """Rows packed as Arrow bring their own `_dlt_id` (so dlt loads their files as they are); it is
    declared and filled exactly as dlt's normalizer does it for the rows it normalizes itself."""
    pipeline = make_pipeline()
    sync(pipeline, source_options=source_options(sandbox, sandbox.token()))
    schema = pipeline.default_schema
    data_tables = [table["name"] for table in schema.data_tables(seen_data_only=True)]
    assert {"fiscal_documents", "lesson_comments", "subscriptions", "subscriptions__products"} <= set(
        data_tables
    )
    for name in data_tables:
        row_id = schema.tables[name]["columns"]["_dlt_id"]
        assert (row_id["data_type"], row_id["nullable"], row_id.get("unique"), row_id.get("row_key")) == (
            "text",
            False,
            True,
            True,
        ), name
        [(rows, distinct_ids)] = query(pipeline, f"select count(*), count(distinct _dlt_id) from {name}")
        assert rows == distinct_ids, name


def test_arrow_pages_change_nothing_in_thewarehouse_tables(sandbox, tmp_path):
    """`arrow_pages = false` (dlt normalizes every row) and the default (flat pages as Arrow tables)
    load the same tables with the same columns, types and rows: the Arrow path is only faster."""
    token = sandbox.token()
    databases = {}
    for arrow_pages in (True, False):
        name = "arrow" if arrow_pages else "rows"
        pipeline = dlt.pipeline(
            pipeline_name=f"platform_sync_{name}",
            destination=dlt.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
            dataset_name="platform_raw",
            pipelines_dir=str(tmp_path / "pipelines"),
        )
        result = sync(pipeline, source_options=source_options(sandbox, token, arrow_pages=arrow_pages))
        assert not result.report.failed, result.report.failed
        databases[name] = warehouse_tables(str(tmp_path / f"{name}.duckdb"))
    assert databases["arrow"].keys() == databases["rows"].keys()
    assert {"fiscal_documents", "lesson_comments", "transfers", "products"} <= databases["arrow"].keys()
    for table, (columns, rows) in databases["arrow"].items():
        assert columns == databases["rows"][table][0], table
        assert rows == databases["rows"][table][1], table
        assert rows, table


def test_the_source_in_a_pipeline_of_ones_own_fills_dlt_row_columns(sandbox, tmp_path):
    """Run outside `sync`, with dlt's defaults (no `add_dlt_load_id`): packed tables still carry the load
    id and row ids, like the rows dlt normalizes itself."""
    pipeline = dlt.pipeline(
        pipeline_name="own_pipeline",
        destination=dlt.destinations.duckdb(str(tmp_path / "own.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    source = platform_source(**source_options(sandbox, sandbox.token()))
    info = pipeline.run(source, loader_file_format="parquet")
    info.raise_on_failed_jobs()
    [load_id] = info.loads_ids
    roots = [
        t["name"] for t in pipeline.default_schema.data_tables(seen_data_only=True) if not t.get("parent")
    ]
    assert {"fiscal_documents", "lesson_comments", "transfers", "subscriptions"} <= set(roots)
    for name in roots:
        counts = query(
            pipeline,
            f"select count(*), count(distinct _dlt_id), count(_dlt_load_id), min(_dlt_load_id), "
            f"max(_dlt_load_id) from {name}",
        )
        assert counts == [(counts[0][0], counts[0][0], counts[0][0], load_id, load_id)], name
