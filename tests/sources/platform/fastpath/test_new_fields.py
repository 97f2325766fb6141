"""Rows with fields the models do not know are packed with a column per new field, and load exactly as
dlt loads the same rows normalized on the row path: the same columns, types and values, across runs;
what only dlt's normalizer can load as it would stays a row."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pyarrow as pa
import pytest

from sources.platform.fastpath.columnar import column_name, columnar_layout, packed_pages
from sources.platform.fastpath.new_fields import NewFields
from sources.platform.resources import STREAMS
from tests.sources.platform.fastpath.test_columnar import (
    FLAT,
    _arrow_ready_pipeline,
    _columns,
    _content,
    _resource,
    _rows,
)

NESTED_PARENT = {  # a nested object of each flat model, present in `_rows(stream)[0]`
    "products": None,
    "product_campaigns": "resultPerClick",
    "product_partners": None,
    "affiliations": None,
    "transfers": "value",
    "fiscal_documents": "document",
    "enrollments": None,
    "lesson_comments": None,
}


def _with_new_fields(stream_name: str, rows: list[dict[str, Any]], **new: Any) -> list[dict[str, Any]]:
    """Copies of the rows, the first with the new fields at the top and in a nested object."""
    out = copy.deepcopy(rows)
    out[0].update(new)
    parent = NESTED_PARENT[stream_name]
    if parent is not None:
        out[0][parent].update({f"nested{key[0].upper()}{key[1:]}": value for key, value in new.items()})
    return out


def _packed(stream_name: str, pages: list[Any]) -> Iterator[Any]:
    """The pages as the source packs them during an extract (`SourceContext.pack`)."""
    stream = STREAMS[stream_name]
    layout = columnar_layout(stream.model, stream.extra_columns, stream.primary_key)
    assert layout is not None
    new_fields = NewFields(layout, f"{stream_name}_as_arrow", dlt.current.source_schema())
    yield from packed_pages(layout, pages, str(dlt.current.load_package_state()["load_id"]), new_fields)


def _load_both_ways(tmp_path: Path, stream_name: str, runs: list[list[list[dict[str, Any]]]]) -> str:
    """Each run's pages loaded as rows into `<stream>_as_rows` and packed into `<stream>_as_arrow`; the
    DuckDB file."""
    pipeline, database = _arrow_ready_pipeline(tmp_path)
    stream = STREAMS[stream_name]
    for pages in runs:
        pipeline.run(
            [
                _resource(stream, f"{stream_name}_as_rows", copy.deepcopy(pages)),
                _resource(stream, f"{stream_name}_as_arrow", _packed(stream_name, copy.deepcopy(pages))),
            ],
            loader_file_format="parquet",
        ).raise_on_failed_jobs()
    return database


def _files_loaded(tmp_path: Path, table: str) -> int:
    pipeline = dlt.attach("columnar", pipelines_dir=str(tmp_path / "pipelines"))
    trace = pipeline.last_trace
    assert trace is not None and trace.last_load_info is not None
    jobs = trace.last_load_info.load_packages[0].jobs["completed_jobs"]
    return sum(
        1
        for job in jobs
        if job.job_file_info.table_name == table and job.job_file_info.file_format == "parquet"
    )


def _assert_same(database: str, stream_name: str) -> None:
    with duckdb.connect(database, read_only=True) as connection:
        assert _columns(connection, f"{stream_name}_as_arrow") == _columns(
            connection, f"{stream_name}_as_rows"
        )
        assert _content(connection, f"{stream_name}_as_arrow") == _content(
            connection, f"{stream_name}_as_rows"
        )


NEW = {"riskScore": 7.5, "schemaVersion": 4, "isTest": True, "geoHash": "6gkzwgj", "dropped": None}


@pytest.mark.parametrize("name", FLAT)
def test_rows_with_new_scalar_fields_are_packed_and_load_as_rows_would(name: str, tmp_path: Path) -> None:
    rows = _with_new_fields(name, _rows(STREAMS[name]), **NEW)
    database = _load_both_ways(tmp_path, name, [[rows]])
    _assert_same(database, name)
    with duckdb.connect(database, read_only=True) as connection:
        types = dict(
            connection.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'raw' and table_name = ?",
                [f"{name}_as_arrow"],
            ).fetchall()
        )
    assert {
        column: types.get(column) for column in ("risk_score", "schema_version", "is_test", "geo_hash")
    } == {
        "risk_score": "DOUBLE",
        "schema_version": "BIGINT",
        "is_test": "BOOLEAN",
        "geo_hash": "VARCHAR",
    }
    assert "dropped" not in types  # a null adds no column, as on the row path
    parent = NESTED_PARENT[name]
    if parent is not None:
        assert types.get(f"{column_name((parent,))}__nested_risk_score") == "DOUBLE"
    # the point of packing them: the table is loaded from one file, not a second one of rows
    assert _files_loaded(tmp_path, f"{name}_as_arrow") == 1


def test_a_new_field_keeps_its_type_across_runs_and_batches(tmp_path: Path) -> None:
    name = "transfers"
    first, second = _rows(STREAMS[name])
    runs = [
        # run 1: a double column; an integer in a later page of the same run joins it as a float
        [[{**first, "riskScore": 1.5}], [{**second, "riskScore": 2}]],
        # run 2 (the same records, merged): an integer, still into the double column of run 1; text in it
        # is dlt's to load (a variant column)
        [[{**first, "riskScore": 3}], [{**second, "riskScore": "high"}]],
    ]
    database = _load_both_ways(tmp_path, name, runs[:1])
    _assert_same(database, name)
    assert _values(database, f"select id, risk_score from raw.{name}_as_arrow") == [
        (first["id"], 1.5),
        (second["id"], 2.0),
    ]
    database = _load_both_ways(tmp_path, name, runs)  # the same pipeline, both runs again
    _assert_same(database, name)
    assert _values(database, f"select id, risk_score, risk_score__v_text from raw.{name}_as_arrow") == [
        (first["id"], 3.0, None),
        (second["id"], None, "high"),
    ]
    assert _values(
        database,
        "select data_type from information_schema.columns "
        "where table_schema = 'raw' and table_name = ? and column_name = 'risk_score'",
        [f"{name}_as_arrow"],
    ) == [("DOUBLE",)]


def _values(database: str, query: str, parameters: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with duckdb.connect(database, read_only=True) as connection:
        return sorted(connection.execute(query, parameters or []).fetchall(), key=repr)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("2026-11-25T10:00:00Z", "a text dlt detects as a timestamp"),
        ({"a": 1}, "an object dlt flattens"),
        ([1, 2], "a list dlt makes a child table of"),
        (2**70, "an integer beyond 64 bits"),
    ],
)
def test_new_fields_only_dlt_can_load_as_it_would_stay_rows(value: Any, why: str, tmp_path: Path) -> None:
    name = "transfers"
    first, second = _rows(STREAMS[name])
    odd = {**second, "surprise": value}
    stream = STREAMS[name]
    layout = columnar_layout(stream.model)
    assert layout is not None
    out = list(packed_pages(layout, [[first, odd]], None, NewFields(layout, name)))
    assert [part for part in out if isinstance(part, list)] == [[odd]], why
    if isinstance(value, int):
        return  # dlt's extract cannot write it either (orjson: "Integer exceeds 64-bit range")
    database = _load_both_ways(tmp_path, name, [[[first, odd]]])
    _assert_same(database, name)


@pytest.mark.parametrize("key", ["ID", "_dlt_id"])  # dlt names them `id` (the key's column), `_dlt_id`
def test_a_new_field_named_as_a_known_column_stays_a_row(key: str) -> None:
    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    assert layout is not None
    first, second = _rows(stream)
    clash = {**second, key: "x"}
    table, rest = NewFields(layout, "transfers").pack([first, clash], None)
    assert table is not None and table.column("id").to_pylist() == [first["id"]]
    assert rest == [clash]


def test_a_table_whose_new_column_comes_late_gets_it_as_nulls_in_earlier_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sources.platform.fastpath import columnar

    monkeypatch.setattr(columnar, "FEW_ROWS", 2)
    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    assert layout is not None
    first, second = _rows(stream)
    pages = [[first, second], [{**first, "isTest": True}]]
    [table] = list(columnar.packed_pages(layout, pages, None, NewFields(layout, "transfers")))
    assert isinstance(table, pa.Table)
    assert table.column("is_test").to_pylist() == [None, None, True]
    assert table.schema.field("is_test").type == pa.bool_()
