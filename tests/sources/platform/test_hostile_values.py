"""A bad value costs that value (issue 48), in every position of every resource: each field of a valid
record of each table (every object, list and value, the key's own excepted) made hostile in turn (a lone
surrogate, an object nested 130 levels, an integer of 2^70, a whole float of 1e30): the record is a row
with its key, a departure names the field, every other field of the record reads exactly as the clean
record's, and the record beside it is untouched; the rows of every table load through dlt into DuckDB."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

from pipelines.sync.platform_pipeline import MAX_IDENTIFIER_LENGTH
from sources.platform.departures import DepartureLog
from sources.platform.records import RecordReader, key_paths
from sources.platform.resources import STREAMS
from tests.sources.platform.models.test_models import RECORD_OF_TABLE, record

Path_ = tuple[Any, ...]  # keys and list indexes from the record down


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"level": value}
    return value


def _surrogate(value: Any) -> Any:
    return f"{value}\ud83d" if isinstance(value, str) else "\ud83d"


HOSTILE = {
    "surrogate": _surrogate,
    "deep": lambda value: _nested(130),
    "huge_integer": lambda value: 2**70,
    "huge_float": lambda value: 1e30,
}


def _positions(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every position in a JSON value: each object member and list element, containers included."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _positions(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _positions(item, (*prefix, index))


def _replaced(raw: dict[str, Any], path: Path_, make: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    holder: Any = out
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = make(holder[path[-1]])
    return out


def _cases(table: str) -> list[tuple[Path_, str]]:
    raw = record(RECORD_OF_TABLE[table])
    keys = {path[0] for path in key_paths(STREAMS[table])}
    return [(p, kind) for p in _positions(raw) if p[0] not in keys for kind in HOSTILE]


def _read(table: str, items: list[Any]) -> tuple[list[dict[str, Any]], DepartureLog]:
    log = DepartureLog()
    rows = [row for row, _ in RecordReader(strict=False, log=log, redact=str).read(STREAMS[table], items)]
    return rows, log


@pytest.mark.parametrize("table", sorted(STREAMS))
def test_a_hostile_value_in_any_field_costs_that_field_only(table: str, tmp_path: Path) -> None:
    stream = STREAMS[table]
    raw = record(RECORD_OF_TABLE[table])
    [clean], _ = _read(table, [copy.deepcopy(raw)])
    cases = _cases(table)
    assert cases, table
    loadable = []
    for path, kind in cases:
        hostile = _replaced(raw, path, HOSTILE[kind])
        other = copy.deepcopy(raw)  # its neighbour on the page
        rows, log = _read(table, [hostile, other])
        where = (table, path, kind)
        assert log.quarantined() == [], where
        assert len(rows) == 2, where
        row, neighbour = rows
        assert neighbour == clean, where
        for key in key_paths(stream):  # the key as sent
            assert row[key[0]] == clean[key[0]], where
        top = path[0]
        assert {k: v for k, v in row.items() if k != top} == {k: v for k, v in clean.items() if k != top}, (
            where
        )
        recorded = {d["field_path"].replace("[]", "") for d in log.departure_rows(table)}
        dotted = ".".join(str(step) for step in path if isinstance(step, str))
        assert any(dotted.startswith(p) or p.startswith(dotted) for p in recorded), (where, recorded)
        loadable.append({**row, "case": f"{'.'.join(map(str, path))}:{kind}"})
    # ... and every such row loads, each under its own key (one table per case: a hostile field may make a
    # column of another type than the clean records' would)
    folder = tmp_path
    pipeline = dlt.pipeline(
        pipeline_name=f"hostile_{table}",
        destination=dlt.destinations.duckdb(
            str(folder / "w.duckdb"), max_identifier_length=MAX_IDENTIFIER_LENGTH
        ),
        dataset_name="raw",
        pipelines_dir=str(folder / "pipelines"),
    )
    pipeline.run(loadable, table_name=table, write_disposition="append", loader_file_format="jsonl")
    with duckdb.connect(str(folder / "w.duckdb"), read_only=True) as connection:
        loaded = sorted(case for (case,) in connection.execute(f'select "case" from raw.{table}').fetchall())
    assert loaded == sorted(row["case"] for row in loadable)
