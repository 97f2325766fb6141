"""The e2e world's scale and source options, and reading a synced DuckDB warehouse (the fixtures that start
the sandbox and make the pipeline: tests/pipelines/sync/conftest.py)."""

from __future__ import annotations

from typing import Any

import dlt
import duckdb

from sandbox.options import catalog_source_options
from sandbox.running import SandboxHandle
from tests.support.warehouses import RUN_STAMPS

E2E_SCALE = 400
E2E_TIME_SCALE = 600.0  # rate-limit windows of 0.1 s: the limits still bind, the tests stay fast


def source_options(handle: SandboxHandle, token: str, **overrides: Any) -> dict[str, Any]:
    return {
        "base_url": handle.base_url,
        "access_token": token,
        "start_date": "2020-01-01",
        **catalog_source_options(handle.catalog()),
        "rate_limit_time_scale": E2E_TIME_SCALE,
        **overrides,
    }


def query(pipeline: dlt.Pipeline, sql: str) -> list[tuple[Any, ...]]:
    path = pipeline.destination_client().config.credentials.database  # type: ignore[attr-defined]
    with duckdb.connect(path, read_only=True) as connection:
        connection.execute("set schema 'platform_raw'")
        return connection.execute(sql).fetchall()


def ids(pipeline: dlt.Pipeline, table: str, column: str = "id") -> list[str]:
    return [str(row[0]) for row in query(pipeline, f"select {column} from {table}")]


def warehouse_tables(path: str) -> dict[str, tuple[list[tuple[str, str, str]], list[tuple[Any, ...]]]]:
    """Every data table: its columns (name, type, nullable; in name order) and its rows without dlt's
    row ids and load ids, nor the times that stamp a run (`RUN_STAMPS`), which differ by run."""
    tables: dict[str, tuple[list[tuple[str, str, str]], list[tuple[Any, ...]]]] = {}
    with duckdb.connect(path, read_only=True) as connection:
        names = connection.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'platform_raw' and table_name not like '\\_dlt%' escape '\\'"
        ).fetchall()
        for (table,) in names:
            columns = connection.execute(
                "select column_name, data_type, is_nullable from information_schema.columns "
                "where table_schema = 'platform_raw' and table_name = ? order by column_name",
                [table],
            ).fetchall()
            kept = [c[0] for c in columns if not c[0].startswith("_dlt_") and c[0] not in RUN_STAMPS]
            select = ", ".join(f'"{c}"' for c in kept)
            rows = connection.execute(f"select {select} from platform_raw.{table} order by all").fetchall()
            tables[table] = (columns, rows)
    return tables
