"""Pages of flat records packed as Arrow tables load exactly as the same rows normalized by dlt."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pyarrow as pa
import pytest

from pipelines.sync.platform_pipeline import _keep_packed_row_ids
from sources.platform.fastpath.columnar import columnar_layout, packed_pages, page_table
from sources.platform.models import columns_for, parse_record
from sources.platform.resources import STREAMS, Stream
from tests.sources.platform.models.test_models import RECORD_OF_TABLE, record

FLAT = [
    "products",
    "product_campaigns",
    "product_partners",
    "affiliations",
    "transfers",
    "fiscal_documents",
    "enrollments",
    "lesson_comments",
]
EXTRA_VALUES: dict[str, Any] = {
    "product_id": "p-1",
    "course_id": 31,
    "team_slug": "school-a",
    "student_slug": "ana",
}


def test_exactly_the_flat_models_are_packed() -> None:
    packed = [name for name, stream in STREAMS.items() if columnar_layout(stream.model) is not None]
    assert packed == FLAT


def _nulled(raw: dict[str, Any], model: Any) -> dict[str, Any]:
    """The record with every optional top-level field null (nested objects included)."""
    out = dict(raw)
    for key, info in model.model_fields.items():
        if not info.is_required():
            out[key] = None
    return out


def _rows(stream: Stream) -> list[dict[str, Any]]:
    raw = record(RECORD_OF_TABLE[stream.name])
    variants = [raw, _nulled(raw, stream.model)]
    extra = {name: EXTRA_VALUES[name] for name in stream.extra_columns if name in EXTRA_VALUES}
    rows = []
    for index, variant in enumerate(variants):
        row = {**parse_record(stream.model, variant), **extra}
        for key in stream.primary_key:  # distinct keys for the merge
            if key in row and isinstance(row[key], str | int) and not isinstance(row[key], bool):
                row[key] = type(row[key])(f"{index + 1}{row[key]}")
        rows.append(row)
    if stream.name == "fiscal_documents":  # its key is document.id
        rows[1]["document"] = {**rows[1]["document"], "id": "second"}
    return rows


def _resource(stream: Stream, name: str, pages: list[Any]) -> Any:
    return dlt.resource(
        pages,
        name=name,
        # dlt writes into column hints: each resource gets its own copies, as in the source
        columns={**columns_for(stream.model), **{k: dict(v) for k, v in stream.extra_columns.items()}},
        primary_key=list(stream.primary_key),
        write_disposition=stream.write_disposition,
    )


def _columns(connection: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, str]]:
    """The table's columns in order, dlt's two row columns last in name order (packed rows bring
    `_dlt_id` then `_dlt_load_id`; these test resources declare no `_dlt_id` hint, so rows normalized
    by dlt get them the other way round)."""
    columns = connection.execute(
        "select column_name, data_type, is_nullable from information_schema.columns "
        "where table_schema = 'raw' and table_name = ? order by ordinal_position",
        [table],
    ).fetchall()
    system = sorted(c for c in columns if c[0] in ("_dlt_id", "_dlt_load_id"))
    return [c for c in columns if c not in system] + system


def _content(connection: duckdb.DuckDBPyConnection, table: str) -> list[tuple[Any, ...]]:
    return sorted(
        connection.execute(f"select * exclude (_dlt_id, _dlt_load_id) from raw.{table}").fetchall(), key=repr
    )


def _arrow_ready_pipeline(tmp_path: Path) -> tuple[dlt.Pipeline, str]:
    """A pipeline into a DuckDB file of its own, set up for packed rows as `sync` does; and the file."""
    database = str(tmp_path / "w.duckdb")
    pipeline = dlt.pipeline(
        pipeline_name="columnar",
        destination=dlt.destinations.duckdb(database),
        dataset_name="raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    _keep_packed_row_ids()
    return pipeline, database


def _packed_during_extract(layout: Any, pages: list[Any]) -> Iterator[Any]:
    """The pages as the source yields them: packed with the load id of the extract running them."""
    yield from packed_pages(layout, pages, str(dlt.current.load_package_state()["load_id"]))


@pytest.mark.parametrize("name", FLAT)
def test_packed_rows_load_exactly_like_rows(name: str, tmp_path: Path) -> None:
    stream = STREAMS[name]
    layout = columnar_layout(stream.model, stream.extra_columns)
    assert layout is not None
    rows = _rows(stream)
    table = page_table(layout, rows)
    assert isinstance(table, pa.Table) and table.num_rows == len(rows)

    pipeline, database = _arrow_ready_pipeline(tmp_path)
    pipeline.run(
        [
            _resource(stream, "as_rows", [rows]),
            _resource(stream, "as_arrow", _packed_during_extract(layout, [rows])),
        ],
        loader_file_format="parquet",
    ).raise_on_failed_jobs()

    with duckdb.connect(database, read_only=True) as connection:
        assert _columns(connection, "as_arrow") == _columns(connection, "as_rows")
        assert _content(connection, "as_arrow") == _content(connection, "as_rows")
        ids = connection.execute(
            "select count(*), count(_dlt_id), count(distinct _dlt_id), count(_dlt_load_id) from raw.as_arrow"
        ).fetchone()
    assert ids == (2, 2, 2, 2)


def test_a_page_with_an_unknown_field_stays_rows_and_mixes_with_packed_pages(tmp_path: Path) -> None:
    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    assert layout is not None
    known, surprising = _rows(stream)
    surprising["bankAccount"] = {**surprising["bankAccount"], "iban": "DE00"}  # nested, not in the spec
    assert page_table(layout, [known, surprising]) is None
    packed = page_table(layout, [known])
    assert packed is not None

    pipeline, database = _arrow_ready_pipeline(tmp_path)
    pipeline.run(
        _resource(stream, "transfers", _packed_during_extract(layout, [[known], [surprising]])),
        loader_file_format="parquet",
    ).raise_on_failed_jobs()
    with duckdb.connect(database, read_only=True) as connection:
        loaded = connection.execute(
            "select id, bank_account__iban, _dlt_id is not null, _dlt_load_id is not null "
            "from raw.transfers order by id"
        ).fetchall()
    assert loaded == [(known["id"], None, True, True), (surprising["id"], "DE00", True, True)]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda row: row.update(surprise=1), "unknown top-level field"),
        (lambda row: row["value"].update(value=Decimal("0.1234567891")), "more than 9 decimals"),
        (lambda row: row["value"].update(value=Decimal("1e30")), "beyond DECIMAL(38, 9)"),
    ],
)
def test_pages_arrow_cannot_carry_exactly_stay_rows(change: Any, why: str) -> None:
    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    assert layout is not None
    rows = _rows(stream)
    change(rows[1])
    assert page_table(layout, rows) is None, why


def test_an_integer_beyond_64_bits_stays_rows() -> None:
    stream = STREAMS["lesson_comments"]
    layout = columnar_layout(stream.model, stream.extra_columns)
    assert layout is not None
    row = parse_record(stream.model, {**record("lesson_comment"), "lessonId": 2**70})
    assert page_table(layout, [row]) is None


def test_an_extra_column_without_a_flat_type_keeps_the_model_on_rows() -> None:
    model = STREAMS["products"].model
    assert columnar_layout(model, {"tags": {"data_type": "json"}}) is None
    assert columnar_layout(model, {"team": {"data_type": "text"}}) is not None


def test_an_empty_page_is_not_packed() -> None:
    layout = columnar_layout(STREAMS["products"].model)
    assert layout is not None and page_table(layout, []) is None


def test_pages_are_joined_into_tables_and_only_rows_with_unknown_fields_stay_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sources.platform.fastpath import columnar

    monkeypatch.setattr(columnar, "BATCH_ROWS", 4)
    monkeypatch.setattr(columnar, "FEW_ROWS", 2)
    monkeypatch.setattr(columnar, "GATHERED_ROWS", 3)
    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    first, second = _rows(stream)
    odd = {**second, "surprise": 1}
    pages = [[first], [second], [odd], [first, odd, second], [second, first], [first], []]
    out = list(columnar.packed_pages(layout, pages))
    shapes = [("table", t.num_rows) if isinstance(t, pa.Table) else ("rows", len(t)) for t in out]
    # a row the model does not know stays a row, its page's other rows are packed; tables of BATCH_ROWS;
    # the pages of one row are gathered before they are packed (and the last of them at the end)
    assert shapes == [("rows", 1), ("rows", 1), ("table", 4), ("table", 3)]
    assert [row for part in out if isinstance(part, list) for row in part] == [odd, odd]
    assert out[2].column("id").to_pylist() == [first["id"], second["id"], first["id"], second["id"]]
    assert list(columnar.packed_pages(None, pages)) == pages


def test_batches_of_a_few_rows_are_packed_together(monkeypatch: pytest.MonkeyPatch) -> None:
    from sources.platform.fastpath import columnar

    stream = STREAMS["transfers"]
    layout = columnar_layout(stream.model)
    first, second = _rows(stream)
    packed: list[int] = []
    split = columnar.split_page

    def counting(layout: Any, rows: list[dict[str, Any]], load_id: str | None) -> Any:
        packed.append(len(rows))
        return split(layout, rows, load_id)

    monkeypatch.setattr(columnar, "split_page", counting)
    pages = [[first], [second], [{**first, "surprise": 1}], [second]]
    out = list(columnar.packed_pages(layout, pages))
    assert packed == [4]  # one packing for the four rows
    assert [len(part) if isinstance(part, list) else part.num_rows for part in out] == [1, 3]
