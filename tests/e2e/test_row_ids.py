"""Row ids: rows packed as Arrow tables (`models/columnar.py`) bring their own `_dlt_id`, so that dlt
loads their extracted files as they are; the column must still be what dlt's normalizer makes it."""

from __future__ import annotations

from pipelines.platform_pipeline import sync
from tests.e2e.conftest import query, source_options


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
