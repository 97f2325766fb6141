"""SQL text for the statements the commands write themselves (privacy rewrite, forget), through a
pipeline's `sql_client()`: quoted names and literals, and the columns of a dataset's tables."""

from __future__ import annotations

from typing import Any


def ident(name: str) -> str:
    """A quoted identifier (a `"` inside doubled)."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: Any) -> str:
    """A quoted text literal (a `'` inside doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def qualified(schema: str, table: str) -> str:
    return f"{ident(schema)}.{ident(table)}"


def table_columns(client: Any, schema: str) -> dict[str, set[str]]:
    """The tables of `schema` and their columns, as the destination's information schema lists them."""
    rows = client.execute_sql(
        "select table_name, column_name from information_schema.columns where table_schema = "
        + literal(schema)
    )
    tables: dict[str, set[str]] = {}
    for table, column in rows or []:
        tables.setdefault(str(table), set()).add(str(column))
    return tables
