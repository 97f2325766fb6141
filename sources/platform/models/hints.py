"""dlt column hints derived from the models, so that every column exists with its type from the first
load on, even when a whole load has only nulls in it.

Names follow dlt's own snake_case naming convention exactly as its relational normalizer flattens rows:
nested objects are joined with ``__`` (``grossGain.value`` -> ``gross_gain__value``), lists become child
tables (``sales__items``), a list of scalars a child table with a ``value`` column.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Annotated, Any, Literal, get_args, get_origin

from dlt.common.normalizers.naming.snake_case import NamingConvention
from dlt.common.schema.typing import TColumnSchema, TDataType, TTableSchemaColumns
from dlt.common.typing import TTableNames
from dlt.extract.hints import TResourceNestedHints, make_nested_hints
from pydantic import BaseModel

_NAMING = NamingConvention()

# Python type of a model field -> dlt data type (``bool`` before ``int``: it is a subclass).
_SCALARS: tuple[tuple[type, TDataType], ...] = (
    (bool, "bool"),
    (int, "bigint"),
    (float, "double"),
    (Decimal, "decimal"),
    (datetime, "timestamp"),
    (str, "text"),
    (dict, "json"),
)

TablePath = tuple[str, ...]  # child table path below the root table, normalized: ("tickets", "lots")


class _Tables:
    def __init__(self) -> None:
        self.columns: dict[TablePath, TTableSchemaColumns] = {}
        self.enums: dict[TablePath, dict[str, tuple[str, ...]]] = {}


def columns_for(model: type[BaseModel]) -> TTableSchemaColumns:
    """Column hints of the root table of ``model``: every flattened scalar column it can produce."""
    return _copy(_tables(model).columns[()])


def nested_hints_for(model: type[BaseModel]) -> dict[TTableNames, TResourceNestedHints]:
    """dlt ``nested_hints`` (``@dlt.resource(nested_hints=...)``) with the columns of each child table,
    keyed by the path below the root table (``("tickets", "lots")`` -> ``events__tickets__lots``)."""
    tables = _tables(model)
    return {
        path: make_nested_hints(columns=_copy(columns)) for path, columns in tables.columns.items() if path
    }


def child_tables_for(model: type[BaseModel]) -> list[TablePath]:
    """Paths of the child tables ``model`` produces (``[("items",), ("affiliates",), ...]``)."""
    return [path for path in _tables(model).columns if path]


def enum_columns(model: type[BaseModel]) -> dict[TablePath, dict[str, tuple[str, ...]]]:
    """Allowed values of every enumerated column, by table path (``()`` is the root) and column name."""
    return {path: dict(columns) for path, columns in _tables(model).enums.items() if columns}


def _copy(columns: TTableSchemaColumns) -> TTableSchemaColumns:
    return {name: typing.cast(TColumnSchema, dict(column)) for name, column in columns.items()}


@cache
def _tables(model: type[BaseModel]) -> _Tables:
    tables = _Tables()
    _walk_table(model, (), tables)
    return tables


def _walk_table(model: type[BaseModel], path: TablePath, tables: _Tables) -> None:
    tables.columns[path] = {}
    tables.enums[path] = {}
    _walk_object(model, path, (), tables)


def _walk_object(model: type[BaseModel], table: TablePath, prefix: tuple[str, ...], tables: _Tables) -> None:
    for name, info in model.model_fields.items():
        tp, _ = unwrap_optional(info.annotation)
        fragments = (*prefix, _NAMING.normalize_path(name))
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            _walk_object(tp, table, fragments, tables)
        elif get_origin(tp) is list:
            if prefix:
                raise TypeError(
                    f"{model.__name__}.{name}: a list inside a nested object needs an explicit parent "
                    "table in dlt's nested hints; not supported by nested_hints_for"
                )
            child = (*table, _NAMING.normalize_tables_path(name))
            item, _ = unwrap_optional(get_args(tp)[0])
            if isinstance(item, type) and issubclass(item, BaseModel):
                _walk_table(item, child, tables)
            else:
                tables.columns[child] = {}
                tables.enums[child] = {}
                _add_column(tables, child, ("value",), item, f"{model.__name__}.{name}")
        else:
            _add_column(tables, table, fragments, tp, f"{model.__name__}.{name}")


def _add_column(tables: _Tables, table: TablePath, fragments: tuple[str, ...], tp: Any, where: str) -> None:
    name = _NAMING.shorten_fragments(*fragments)
    # Every column takes nulls, whatever the spec says: the API sends nulls where it documents none, and
    # such a record loads (`tolerant.py`). The source declares its key columns NOT NULL.
    column: TColumnSchema = {"name": name, "data_type": data_type_of(tp, where), "nullable": True}
    if column["data_type"] == "timestamp":
        column["timezone"] = True
    columns = tables.columns[table]
    existing = columns.get(name)
    if existing is not None:  # two API keys with one snake_case name (token user.platformId/platform_id)
        if existing["data_type"] != column["data_type"]:
            raise TypeError(f"{where}: column {name} has two types")
        return
    columns[name] = column
    if get_origin(tp) is Literal:
        tables.enums[table][name] = tuple(get_args(tp))


def data_type_of(tp: Any, where: str) -> TDataType:
    if get_origin(tp) is Literal:
        return "text"
    base = get_origin(tp) or tp
    for py_type, data_type in _SCALARS:
        if isinstance(base, type) and issubclass(base, py_type):
            return data_type
    raise TypeError(f"{where}: no dlt data type for {tp!r}")


def unwrap_optional(tp: Any) -> tuple[Any, bool]:
    """Strip ``Annotated`` and ``| None``: (inner type, whether None is allowed)."""
    optional = False
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin is types.UnionType or origin is typing.Union:
            args = [a for a in get_args(tp) if a is not type(None)]
            optional = optional or len(args) < len(get_args(tp))
            if len(args) != 1:
                raise TypeError(f"unions other than X | None are not supported: {tp!r}")
            tp = args[0]
        else:
            return tp, optional
