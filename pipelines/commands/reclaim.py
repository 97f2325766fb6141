"""After a forget, no page of the DuckDB file keeps the person (issue 49).

Blanking a value rewrites its rows, but DuckDB leaves the old strings in the blocks it freed and in the
dictionaries of the column segments it kept: after `forget` and `models`, a warehouse without a privacy
key still held the forgotten email 15 times and the CPF 10 times in its bytes (one UPDATE of one value in
20,000 rows: the value still there once after a CHECKPOINT). So, under forget's write lock:
1. the marts, which hold the person until they are rebuilt, are rebuilt (`dbt run`: the models without
   their tests, on the warehouse the sync loaded) when they are built;
2. the file is rewritten: every schema copied (DuckDB's `COPY FROM DATABASE`) into a new file beside it,
   which then replaces it (`os.replace`, the file's mode kept), so only live values remain.
It costs the file's size in free disk space and a few seconds per hundred MB; when it cannot be done (no
space), the rows are blanked all the same and one line says that freed pages may keep the person and
what to do. On PostgreSQL, old row versions stay in a table's files until `VACUUM FULL` rewrites it: after
the marts are rebuilt, forget runs it on every table it changed (its write-ahead log keeps the values
until the server recycles it: docs/contracts.md).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dlt
import duckdb

logger = logging.getLogger("platform_sync.forget")
REWRITE_SUFFIX = ".forget-rewrite"
MARTS = "marts"
WAL = "the server's write-ahead log keeps them until it is recycled"


def duckdb_file(pipeline: dlt.Pipeline) -> Path | None:
    """The pipeline's DuckDB file, None on another destination (or in memory)."""
    destination = pipeline.destination
    if destination is None or not destination.destination_type.endswith(".duckdb"):
        return None
    credentials: Any = pipeline.destination_client().config.credentials
    database = credentials.database
    return Path(database) if database and database != ":memory:" else None


def has_marts(path: Path) -> bool:
    with duckdb.connect(str(path), read_only=True) as connection:
        found = connection.execute(
            "select count(*) from information_schema.tables where table_schema = ?", [MARTS]
        ).fetchone()
    return bool(found and found[0])


def rewrite(path: Path) -> None:
    """Replace the DuckDB file by a copy of its live contents (every schema, table, view and sequence)."""
    fresh = path.with_name(path.name + REWRITE_SUFFIX)
    fresh.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(path)) as connection:
            row = connection.execute("select current_database()").fetchone()
            source = str(row[0]) if row else path.stem
            connection.execute(f"attach '{_quoted(fresh)}' as platform_sync_rewrite")
            connection.execute(f'copy from database "{source}" to platform_sync_rewrite')
            connection.execute("detach platform_sync_rewrite")
        shutil.copymode(path, fresh)
        os.replace(fresh, path)
    finally:
        fresh.unlink(missing_ok=True)
        Path(str(fresh) + ".wal").unlink(missing_ok=True)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def leave_no_bytes(pipeline: dlt.Pipeline, rebuild_marts: Any, tables: Sequence[str] = ()) -> str:
    """Rebuild the marts when built (`rebuild_marts()`: whether dbt succeeded), then rewrite the DuckDB
    file, or on PostgreSQL `VACUUM FULL` the `tables` (`schema.table`) forget changed; the line that says
    what was done, or what is left and what to do."""
    if _is_postgres(pipeline):
        return _vacuum(pipeline, rebuild_marts, tables)
    path = duckdb_file(pipeline)
    if path is None or not path.exists():
        return (
            "the destination is not a DuckDB file: its freed space may keep old row versions until it is "
            "vacuumed; run `platform-sync models` to rebuild the marts"
        )
    marts = has_marts(path)
    rebuilt = marts and bool(rebuild_marts())
    try:
        rewrite(path)
    except (duckdb.Error, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            f"the DuckDB file {path} could not be rewritten ({first}): its freed pages may keep the "
            "person's values; free space beside it and run forget again"
        )
    if marts and not rebuilt:
        return (
            f"the DuckDB file {path} was rewritten, but the marts were not rebuilt (dbt failed): run "
            "`platform-sync models`, then forget again so that no freed page keeps the person"
        )
    done = "the marts were rebuilt and " if marts else ""
    return f"{done}the DuckDB file {path} was rewritten: no freed page keeps the person's values"


def _is_postgres(pipeline: dlt.Pipeline) -> bool:
    destination = pipeline.destination
    return destination is not None and destination.destination_type.endswith(".postgres")


def _vacuum(pipeline: dlt.Pipeline, rebuild_marts: Any, tables: Sequence[str]) -> str:
    """PostgreSQL keeps an updated row's old version in the table's file until `VACUUM FULL` rewrites
    the table (a plain VACUUM only marks the space free). The marts are rebuilt first: dbt's tables are
    made anew and the old ones dropped, whose files PostgreSQL removes."""
    try:
        with pipeline.sql_client() as client:
            built = client.execute_sql(
                "select count(*) from information_schema.tables where table_schema = %s", MARTS
            )
        marts = bool(built and built[0][0])
        rebuilt = marts and bool(rebuild_marts())
        with pipeline.sql_client() as client:  # dlt's PostgreSQL client runs statements in autocommit
            for qualified in tables:
                schema, table = qualified.split(".", 1)
                client.execute_sql(f'VACUUM FULL "{_name(schema)}"."{_name(table)}"')
    except Exception as exc:  # a server refusing (permissions, a lock held by a reader)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            f"the changed tables could not be vacuumed ({first}): their old row versions may keep the "
            "person's values; run VACUUM FULL on them as their owner"
        )
    vacuumed = f"{len(tables):,} changed tables rewritten by VACUUM FULL"
    if not marts:
        return f"{vacuumed}: no old row version keeps the person's values ({WAL})"
    if not rebuilt:
        return f"{vacuumed}, but the marts were not rebuilt (dbt failed): run `platform-sync models`"
    return f"the marts were rebuilt and {vacuumed}: no old row version keeps the person's values ({WAL})"


def _name(part: str) -> str:
    return part.replace('"', '""')
