"""Pages of validated flat rows as Arrow tables: the fast path of the large paged lists.

dlt's relational normalizer visits every value of every row in Python again after ``parse_record`` has
validated it; a page handed to dlt as an Arrow table is written to parquet as it is (normalizing was a
large part of a sync: ``bench/README.md``). So a page of rows of a flat model (no lists, hence no
child tables; no free maps) is packed into one Arrow table with dlt's column names. Only the container
changes: the values are the very ones ``parse_record`` returned, typed by the model.

A page is left as rows (``page_table`` returns None) when Arrow cannot carry it exactly: a decimal with
more than 9 decimals or an integer beyond 64 bits. A row with a field the models do not know is set
apart (``split_page``) and packed with a column per new field where that column is the one dlt would make
(``new_fields.py``), else left as a row (dlt adds its column, the schema evolves). Models with lists or
free maps always stay rows: dlt's normalizer owns child tables and json columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import pyarrow as pa
from dlt.common.normalizers.naming.snake_case import NamingConvention
from dlt.common.normalizers.utils import generate_dlt_ids
from dlt.common.schema.typing import C_DLT_ID, C_DLT_LOAD_ID
from pydantic import BaseModel

from sources.platform.models.hints import columns_for, data_type_of, unwrap_optional

_NAMING = NamingConvention()
# Each packed row carries the row id dlt's normalizer gives the rows it normalizes itself (random, as
# dlt's own for tables that are not upserted). Given here, dlt's parquet normalizer need not rewrite the
# file to add it: the extracted file is loaded as it is.
ROW_ID = pa.field(C_DLT_ID, pa.string(), nullable=False)
# ... and the load id, when the caller knows it (during an extract), so that the tables need no setting
# of dlt's (`add_dlt_load_id`) to match the rows dlt normalizes.
LOAD_ID = pa.field(C_DLT_LOAD_ID, pa.string(), nullable=False)

# dlt's default decimal for DuckDB and most SQL destinations (our column hints carry no precision).
DECIMAL = pa.decimal128(38, 9)
TIMESTAMP = pa.timestamp("us", tz="UTC")

ARROW_TYPES: dict[str, pa.DataType] = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "decimal": DECIMAL,
    "timestamp": TIMESTAMP,
    "text": pa.string(),
    "bool": pa.bool_(),
}
# dlt checks an Arrow item's schema once per item (milliseconds for a wide table): pages are yielded
# in tables of about this many rows, which bounds the memory they take too.
BATCH_ROWS = 10_000
FEW_ROWS = 20
GATHERED_ROWS = 1_000

# Failures of packing a value into its Arrow type (lost decimals, int overflow): the page stays rows.
PACKING_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


class NotColumnar(TypeError):
    """The model has a field Arrow cannot carry as a flat column; its pages stay rows."""


@dataclass(frozen=True)
class RowShape:
    """The keys of one object level of a row, and the shapes of its nested objects."""

    keys: frozenset[str]
    nested: tuple[tuple[str, RowShape], ...]

    def holds(self, row: Mapping[str, Any]) -> bool:
        """Whether the row has no key the model does not know, at any level."""
        if not row.keys() <= self.keys:
            return False
        for key, shape in self.nested:
            value = row.get(key)
            if value is not None and not shape.holds(value):
                return False
        return True


@dataclass(frozen=True)
class Layout:
    """How a page of rows of one flat model becomes one Arrow table with dlt's column names."""

    schema: pa.Schema  # nested, the API's keys, then the extra columns: what the rows are packed into
    shape: RowShape
    columns: tuple[tuple[str, str], ...]  # (dotted path in the flattened table, dlt column name)
    table_schema: pa.Schema  # the flat table handed to dlt: dlt's names, nullable as the column hints say,
    # and the row id last


def columnar_layout(
    model: type[BaseModel],
    extra_columns: Mapping[str, Mapping[str, Any]] | None = None,
    keys: tuple[str, ...] = (),
) -> Layout | None:
    """The layout of the model's rows plus the stream's extra columns, or None if the model has a list
    or a free map (see the module's docstring). The `keys` columns are not nullable, as the source
    declares them."""
    extras = tuple(
        (name, str(hint.get("data_type", "text")), bool(hint.get("nullable", True)))
        for name, hint in (extra_columns or {}).items()
    )
    try:
        return _layout(model, extras, keys)
    except NotColumnar:
        return None


@cache
def _layout(
    model: type[BaseModel], extras: tuple[tuple[str, str, bool], ...], keys: tuple[str, ...]
) -> Layout:
    fields, shape = _struct(model)
    unknown = [name for name, data_type, _ in extras if data_type not in ARROW_TYPES]
    if unknown:
        raise NotColumnar(f"extra columns {unknown} have no flat Arrow type")
    extra_fields = [pa.field(name, ARROW_TYPES[data_type], nullable) for name, data_type, nullable in extras]
    shape = RowShape(shape.keys | {f.name for f in extra_fields}, shape.nested)
    flat = list(_flat_fields(fields, (), ()))
    hints = columns_for(model)
    if len({name for _, name, _ in flat}) < len(flat):
        raise NotColumnar(f"{model.__name__}: two fields with one column name")
    # dlt warns on every page whose Arrow schema says otherwise than the column hints
    table_fields = [
        pa.field(name, arrow_type, bool(hints[name].get("nullable", True)) and name not in keys)
        for _, name, arrow_type in flat
    ]
    return Layout(
        schema=pa.schema([*fields, *extra_fields]),
        shape=shape,
        columns=(*((path, name) for path, name, _ in flat), *((f.name, f.name) for f in extra_fields)),
        table_schema=pa.schema([*table_fields, *extra_fields, ROW_ID]),
    )


def _struct(model: type[BaseModel]) -> tuple[list[pa.Field], RowShape]:
    fields: list[pa.Field] = []
    nested: list[tuple[str, RowShape]] = []
    for key, info in model.model_fields.items():
        try:
            tp, _ = unwrap_optional(info.annotation)
        except TypeError:  # a union of several types
            raise NotColumnar(f"{model.__name__}.{key}: {info.annotation!r}") from None
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            children, shape = _struct(tp)
            fields.append(pa.field(key, pa.struct(children)))
            nested.append((key, shape))
        else:
            fields.append(pa.field(key, _scalar(tp, f"{model.__name__}.{key}")))
    return fields, RowShape(frozenset(model.model_fields), tuple(nested))


def _scalar(tp: Any, where: str) -> pa.DataType:
    try:
        data_type = data_type_of(tp, where)
    except TypeError:  # a list (a child table)
        raise NotColumnar(f"{where}: {tp!r} is a list") from None
    if data_type not in ARROW_TYPES:  # json: a free map
        raise NotColumnar(f"{where}: {tp!r} is not a flat column ({data_type})")
    return ARROW_TYPES[data_type]


def _flat_fields(
    fields: list[pa.Field], keys: tuple[str, ...], fragments: tuple[str, ...]
) -> Iterator[tuple[str, str, pa.DataType]]:
    """(dotted path, dlt column name, type) of every leaf: named exactly as dlt's relational normalizer
    names flattened nested objects (see hints.py)."""
    for f in fields:
        path = (*keys, f.name)
        names = (*fragments, _NAMING.normalize_path(f.name))
        if pa.types.is_struct(f.type):
            yield from _flat_fields(list(f.type), path, names)
        else:
            yield ".".join(path), _NAMING.shorten_fragments(*names), f.type


def column_name(path: tuple[str, ...]) -> str:
    """The column of a packed table holding the value at `path` (the API's keys) of each row."""
    return _NAMING.shorten_fragments(*(_NAMING.normalize_path(key) for key in path))


def page_table(
    layout: Layout, rows: list[dict[str, Any]], load_id: str | None = None, *, known_keys: bool = False
) -> pa.Table | None:
    """The rows (as ``parse_record`` returned them, plus extra columns) as one Arrow table with dlt's
    column names, row ids and the load id if given, or None if Arrow cannot carry them exactly (the caller
    then yields the rows). ``known_keys``: the rows were validated to have no field the model does not
    know (``parse_page_strictly``), so that is not checked again."""
    if not rows or not (known_keys or all(layout.shape.holds(row) for row in rows)):
        return None
    try:
        table = pa.Table.from_pylist(rows, schema=layout.schema)
    except PACKING_ERRORS:
        return None
    while any(pa.types.is_struct(t) for t in table.schema.types):
        table = table.flatten()
    by_path = dict(zip(table.column_names, table.columns, strict=True))
    row_ids = pa.array(generate_dlt_ids(table.num_rows), pa.string())
    try:
        packed = pa.Table.from_arrays(
            [*(by_path[path] for path, _ in layout.columns), row_ids], schema=layout.table_schema
        )
    except PACKING_ERRORS:
        return None
    if load_id is not None:
        packed = packed.append_column(LOAD_ID, pa.repeat(pa.scalar(load_id, pa.string()), packed.num_rows))
    return packed


class RowPacker(Protocol):
    """Packs the rows `split_page` left as rows, where it can (`new_fields.NewFields`)."""

    def pack(
        self, rows: list[dict[str, Any]], load_id: str | None
    ) -> tuple[pa.Table | None, list[dict[str, Any]]]: ...


def packed_pages(
    layout: Layout | None,
    pages: Iterable[list[dict[str, Any]] | pa.Table],
    load_id: str | None = None,
    new_fields: RowPacker | None = None,
) -> Iterator[Any]:
    """The pages' rows, those Arrow can carry joined into tables of about ``BATCH_ROWS`` rows (with the
    load id if given); the others as the rows they are. A page that arrives packed already (by a helper
    process, see ``offload.py``) is joined as it is. Within a page, the rows with a field the model does
    not know (a field the API added) are packed by ``new_fields`` if it can (with a column per new field),
    else stay rows; the page's other rows are packed: one new field in one record does not cost its
    whole page the fast path.

    Batches of fewer than ``FEW_ROWS`` rows (the few rows a helper sets apart from its table) are
    gathered and packed together (packing costs about as much for one row as for a hundred), at the
    latest with the table they came beside: a table whose new columns arrive in its first batch is
    written to one file (dlt starts another file when a table's columns grow)."""
    if layout is None:
        yield from pages
        return
    buffered: list[pa.Table] = []
    count = 0
    few: list[dict[str, Any]] = []

    def pack(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        nonlocal count
        table, rest = split_page(layout, rows, load_id)
        extended = None
        if rest and new_fields is not None:
            extended, rest = new_fields.pack(rest, load_id)
        for packed in (table, extended):
            if packed is not None:
                buffered.append(packed)
                count += packed.num_rows
        if rest:
            yield rest

    for rows in pages:
        if isinstance(rows, pa.Table):
            buffered.append(rows)
            count += rows.num_rows
        elif len(rows) < FEW_ROWS:
            few.extend(rows)
            if len(few) < GATHERED_ROWS:
                continue
            gathered, few = few, []
            yield from pack(gathered)
        else:
            yield from pack(rows)
        if count >= BATCH_ROWS:
            if few:
                gathered, few = few, []
                yield from pack(gathered)
            yield _joined(buffered)
            buffered, count = [], 0
    if few:
        yield from pack(few)
    if buffered:
        yield _joined(buffered)


def _joined(tables: list[pa.Table]) -> pa.Table:
    """One table of the tables, those without a new column getting it as nulls."""
    if all(table.schema.equals(tables[0].schema) for table in tables[1:]):
        return pa.concat_tables(tables)
    return pa.concat_tables(tables, promote_options="default")


def split_page(
    layout: Layout, rows: list[dict[str, Any]], load_id: str | None
) -> tuple[pa.Table | None, list[dict[str, Any]]]:
    """(the table of the rows Arrow can carry, or None if it cannot carry them, and the other rows)."""
    known = [row for row in rows if layout.shape.holds(row)]
    if len(known) < len(rows):
        rest = [row for row in rows if not layout.shape.holds(row)]
    else:
        rest = []
    table = page_table(layout, known, load_id, known_keys=True) if known else None
    if table is None:
        return None, rows
    return table, rest
