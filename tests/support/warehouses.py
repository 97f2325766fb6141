"""Comparing two DuckDB warehouses of the sync record by record (tests/pipelines/sync and its faults/).

A record is named by its key as the sandbox names it (key columns joined by `/`, the snapshot time left
out); the rows of a child table belong to the record of their root row. dlt's own columns (row ids,
load ids, list positions) and the snapshot time of the community snapshots differ by run and are left
out, and so is the time a sale was last verified; everything else must be equal.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import duckdb

from sources.platform.resources import STREAMS

SCHEMA = "platform_raw"
SNAPSHOT_TABLES = ("community_top_posts", "community_commenters")
# Columns that stamp the run that wrote a row, not the record: the snapshot time of the community
# snapshots, the time a sale was last verified (fetched).
RUN_STAMPS = frozenset({"snapshot_at", "verified_at"})
Row = tuple[tuple[str, Any], ...]
# `dbt build` without dbt's data and unit tests (two thirds of a build's time): for a test that needs the
# marts' rows, not the dbt tests' verdicts. tests/dbt_models runs the data tests on every world, as do the
# tests that say they must pass there (PostgreSQL, accounts, pseudonymised). `--select` would not do: dbt
# builds the tests of the nodes it selects. As `run_models`' extra arguments, and as dbt's own variable for a
# `platform-sync models` process.
MODELS_ONLY = ("--exclude-resource-type", "test", "--exclude-resource-type", "unit_test")
MODELS_ONLY_ENV = {"DBT_EXCLUDE_RESOURCE_TYPES": "test unit_test"}


def data_tables(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """The data tables (not dlt's, not the source's `_platform_*`), parents before their children."""
    return [
        name
        for (name,) in connection.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_%' escape '\\' order by length(table_name), table_name",
            [SCHEMA],
        ).fetchall()
    ]


def rows_by_record(path: str, latest_snapshot_only: bool = False) -> dict[str, dict[str, list[Row]]]:
    """Every data table's rows (without dlt's columns and the snapshot time), by the record they belong
    to. `latest_snapshot_only`: of the community snapshots (appended every scan), only each community's
    newest snapshot and its child rows, which is what a rerun after a failed scan must match."""
    out: dict[str, dict[str, list[Row]]] = {}
    owners: dict[str, str] = {}  # _dlt_id -> record key
    with duckdb.connect(path, read_only=True) as connection:
        for table in data_tables(connection):
            cursor = connection.execute(f"select * from {SCHEMA}.{table}")
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
            if latest_snapshot_only and table in SNAPSHOT_TABLES:
                newest: dict[Any, Any] = {}
                for row in rows:
                    newest[row["community_id"]] = max(
                        newest.get(row["community_id"], row["snapshot_at"]), row["snapshot_at"]
                    )
                rows = [row for row in rows if row["snapshot_at"] == newest[row["community_id"]]]
            by_record: dict[str, list[Row]] = defaultdict(list)
            for row in rows:
                if "__" in table:
                    key = owners.get(row["_dlt_parent_id"])
                    if key is None:  # an orphan, or the child of an older snapshot left out
                        continue
                else:
                    stream = STREAMS[table]
                    key = "/".join(str(row[k]) for k in stream.primary_key if k != "snapshot_at")
                owners[row["_dlt_id"]] = key
                kept = tuple(
                    sorted((k, v) for k, v in row.items() if not k.startswith("_dlt") and k not in RUN_STAMPS)
                )
                by_record[key].append(kept)
            out[table] = dict(by_record)
    return out


def columns(path: str) -> dict[str, set[tuple[str, str]]]:
    """(name, type) of every column of every data table."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    with duckdb.connect(path, read_only=True) as connection:
        for table, column, kind in connection.execute(
            "select table_name, column_name, data_type from information_schema.columns "
            "where table_schema = ? and table_name not like '\\_%' escape '\\'",
            [SCHEMA],
        ).fetchall():
            found[table].add((column, kind))
    return dict(found)


def integrity_problems(path: str) -> list[str]:
    """Duplicate keys in the tables of the resources, child rows whose parent row is not there, and
    child rows that appear twice under one parent (the same list position loaded twice)."""
    problems: list[str] = []
    with duckdb.connect(path, read_only=True) as connection:
        tables = data_tables(connection)
        for table in tables:
            if "__" not in table:
                key = ", ".join(STREAMS[table].primary_key)
                dupes = connection.execute(
                    f"select {key}, count(*) from {SCHEMA}.{table} group by all having count(*) > 1 limit 3"
                ).fetchall()
                if dupes:
                    problems.append(f"{table}: duplicate keys {dupes}")
                continue
            parent = table.rsplit("__", 1)[0]
            orphans = connection.execute(
                f"select count(*) from {SCHEMA}.{table} c where not exists "
                f"(select 1 from {SCHEMA}.{parent} p where p._dlt_id = c._dlt_parent_id)"
            ).fetchone()
            if orphans and orphans[0]:
                problems.append(f"{table}: {orphans[0]} rows without a parent row in {parent}")
            twice = connection.execute(
                f"select _dlt_parent_id, _dlt_list_idx, count(*) from {SCHEMA}.{table} "
                "group by all having count(*) > 1 limit 3"
            ).fetchall()
            if twice:
                problems.append(f"{table}: list positions loaded twice {twice}")
    return problems


def assert_exact(ours: str, reference: str) -> None:
    """`ours` holds exactly the reference's records: the same tables and columns, every record of the
    reference and none more, each with equal rows and equal child rows; no duplicate key, no orphan."""
    assert integrity_problems(ours) == []
    assert columns(ours) == columns(reference)
    mine, theirs = rows_by_record(ours, True), rows_by_record(reference, True)
    assert mine.keys() == theirs.keys()
    for table, records in theirs.items():
        assert mine[table].keys() == records.keys(), (
            table,
            sorted(records.keys() - mine[table].keys())[:5],
            sorted(mine[table].keys() - records.keys())[:5],
        )
        for key, rows in records.items():
            assert Counter(mine[table][key]) == Counter(rows), (table, key)
