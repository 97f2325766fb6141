"""Fields the API added beyond the spec, packed as columns of a flat table's Arrow batches.

A record with a field the models do not know used to stay a row: dlt normalized it apart and loaded it
from a second file of its table. At a drift of 3% that was about 1% of every large table's records, and a
table staged from two files merges far more slowly in DuckDB (bench/README.md, "Where the drifting pages'
cost goes"). So such a row is packed too, with one column per new field, as long as that column is the
one dlt's normalizer would have made of the same value on the row path:

- named as dlt names a nested field (`buyer.address.geoHash` -> `buyer__address__geo_hash`);
- typed as dlt infers a JSON scalar: bool, bigint (within 64 bits), double, text; and no type detection
  of the schema's (`iso_timestamp` by default) claims the value;
- with no type the schema prefers for that name, and no column filters on the table;
- agreeing with the column's type in the table's schema (earlier runs, earlier batches of this one): an
  integer joins a double column as a float, as dlt coerces it; any other disagreement is left to dlt.

Anything else (a new object or list, a timestamp-looking text, a type conflict, a name clash) stays a row,
and dlt evolves the schema from it as before. A null in a new field adds no column, as on the row path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa
from dlt.common.schema import Schema
from dlt.common.schema.typing import C_DLT_ID, C_DLT_LOAD_ID
from dlt.common.schema.utils import autodetect_sc_type

from sources.platform.fastpath.columnar import (
    ARROW_TYPES,
    PACKING_ERRORS,
    Layout,
    RowShape,
    column_name,
    page_table,
)

Rows = list[dict[str, Any]]
Path = tuple[str, ...]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_FLOAT_INT = 2**53  # beyond it, an integer joined to a double column would change


class _NotPackable(Exception):
    """A row's new field that only dlt's normalizer can load as it would (see the module's docstring)."""


class NewFields:
    """Packs a flat table's rows that carry fields its model does not know, one column per new field.

    `schema` is the source's schema as the extract holds it (`dlt.current.source_schema()`), read for the
    types of the table's columns when a new field is met; without one (a reader driven by hand) the
    first value of each new field in this run decides its type."""

    def __init__(self, layout: Layout, table: str, schema: Schema | None = None) -> None:
        self._layout = layout
        self._table = table
        self._schema = schema
        # a new field named as a column of the table (its model's, dlt's own) is dlt's to resolve
        self._known = frozenset((*(name for _, name in layout.columns), C_DLT_ID, C_DLT_LOAD_ID))
        self._types: dict[str, str] = {}  # new columns' types decided in this run

    def pack(self, rows: Rows, load_id: str | None) -> tuple[pa.Table | None, Rows]:
        """(the table of the rows that can be packed with their new fields, or None; the other rows)."""
        packable: Rows = []
        values: list[dict[str, Any]] = []
        rest: Rows = []
        for row in rows:
            try:
                new = self._new_columns(row)
            except _NotPackable:
                rest.append(row)
                continue
            packable.append(row)
            values.append(new)
        if not packable:
            return None, rest
        table = page_table(self._layout, packable, load_id, known_keys=True)
        if table is None:
            return None, rows
        names = list(dict.fromkeys(name for new in values for name in new))
        try:
            for name in names:
                column = pa.array([new.get(name) for new in values], ARROW_TYPES[self._types[name]])
                table = table.append_column(pa.field(name, column.type), column)
        except PACKING_ERRORS:
            return None, rows
        return table, rest

    def _new_columns(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The row's new fields as {column: value}, with this run's type of each column settled."""
        columns: dict[str, Any] = {}
        if self._filtered():
            raise _NotPackable(self._table)
        for path, value in _new_fields(row, self._layout.shape, ()):
            if value is None:
                continue  # no column, as dlt's normalizer makes none of a null
            name = column_name(path)
            if name in self._known or name in columns:
                raise _NotPackable(name)
            columns[name] = self._typed(name, value)
        return columns

    def _typed(self, name: str, value: Any) -> Any:
        inferred = _dlt_type(value, self._detections())
        if self._schema is not None and self._schema.get_preferred_type(name) is not None:
            raise _NotPackable(name)  # a type the schema prefers for the name: dlt's to apply
        settled = self._types.get(name) or self._schema_type(name) or inferred
        if settled == inferred:
            self._types[name] = settled
            return value
        if settled == "double" and inferred == "bigint" and abs(value) <= _EXACT_FLOAT_INT:
            self._types[name] = settled
            return float(value)
        raise _NotPackable(name)

    def _schema_type(self, name: str) -> str | None:
        if self._schema is None or self._table not in self._schema.tables:
            return None
        column = self._schema.get_table_columns(self._table).get(name)
        data_type = None if column is None else column.get("data_type")
        if data_type is not None and data_type not in ARROW_TYPES:
            raise _NotPackable(name)  # a type Arrow is not given here (json, date, ...): dlt's to coerce
        return data_type

    def _filtered(self) -> bool:
        """Whether the table has dlt's column filters, which only its normalizer applies."""
        return self._schema is not None and bool(self._schema.tables.get(self._table, {}).get("filters"))

    def _detections(self) -> Iterable[Any]:
        if self._schema is None:
            return ("iso_timestamp",)  # dlt's default
        return self._schema.settings.get("detections") or ()


def _new_fields(row: Mapping[str, Any], shape: RowShape, path: Path) -> Iterator[tuple[Path, Any]]:
    """(path, value) of every field of the row the model does not know, at any depth."""
    for key, value in row.items():
        if key not in shape.keys:
            yield (*path, key), value
    for key, nested in shape.nested:
        value = row.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise _NotPackable(key)
        yield from _new_fields(value, nested, (*path, key))


def _dlt_type(value: Any, detections: Iterable[Any]) -> str:
    """The type dlt's normalizer gives a new column from this value (checked against dlt's own result in
    tests/pipelines/sync/test_dlt_public_api.py, at each tested dlt version), if it
    is one packed here."""
    if autodetect_sc_type(list(detections), type(value), value) is not None:
        raise _NotPackable(repr(value))
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _NotPackable(repr(value))
        return "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "text"
    raise _NotPackable(type(value).__name__)  # an object or a list: dlt flattens it or makes a child table
