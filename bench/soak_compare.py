"""Divergence of a scheduled warehouse from a fresh full sync of the same world, table by table.

A record is named by its key (`STREAMS[table].primary_key`, the snapshot time left out, joined by `/`);
the rows of a child table (`parent__child`) belong to the record of their root row. Compared: every
column but dlt's own (`_dlt_*`), the snapshot time and the sync's bookkeeping (`verified_at`,
`_platform_read_at`, `_platform_deleted_at`); a column one warehouse lacks counts as null. The community
snapshots (appended every scan) are compared by their newest snapshot.

Per table: `missing` (in the reference, not in ours), `ghosts` (in ours, not in the reference) split into
`ghosts_flagged` (`_platform_deleted_at` set: what issue 25 asks) and `ghosts_unflagged`,
`flagged_alive` (marked deleted, but the platform has it), `duplicated` (a key held by two root rows) and
`stale` (in both, with different values).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from sources.platform.resources import STREAMS

SCHEMA = "platform_raw"
SNAPSHOT_TABLES = ("community_top_posts", "community_commenters")
DELETED = "_platform_deleted_at"
BOOKKEEPING = frozenset({"snapshot_at", "verified_at", "_platform_read_at", DELETED})
Row = tuple[tuple[str, Any], ...]


@dataclass
class Records:
    rows: dict[str, list[Row]] = field(default_factory=dict)  # record key -> its rows, children included
    deleted: set[str] = field(default_factory=set)  # keys whose root row is marked deleted
    duplicated: list[str] = field(default_factory=list)  # keys with more than one root row


@dataclass
class TableDivergence:
    records: int  # in the reference
    missing: list[str] = field(default_factory=list)
    ghosts_flagged: list[str] = field(default_factory=list)
    ghosts_unflagged: list[str] = field(default_factory=list)
    flagged_alive: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {k: (v if isinstance(v, int) else len(v)) for k, v in asdict(self).items()}


def _tables(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """Data tables, roots before their children (the source's `_platform_*` and dlt's left out)."""
    return [
        name
        for (name,) in connection.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_%' escape '\\' order by length(table_name), table_name",
            [SCHEMA],
        ).fetchall()
    ]


def _kept(row: dict[str, Any]) -> Row:
    return tuple(
        sorted(
            (k, v)
            for k, v in row.items()
            if v is not None and not k.startswith("_dlt") and k not in BOOKKEEPING
        )
    )


def read_records(path: str) -> dict[str, Records]:
    """Every data table of a warehouse as records (see the module docstring)."""
    out: dict[str, Records] = {}
    owners: dict[str, tuple[str, str]] = {}  # _dlt_id -> (root table, record key)
    with duckdb.connect(path, read_only=True) as connection:
        for table in _tables(connection):
            cursor = connection.execute(f"select * from {SCHEMA}.{table}")
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
            if table in SNAPSHOT_TABLES:
                newest: dict[Any, Any] = {}
                for row in rows:
                    newest[row["community_id"]] = max(
                        newest.get(row["community_id"], row["snapshot_at"]), row["snapshot_at"]
                    )
                rows = [row for row in rows if row["snapshot_at"] == newest[row["community_id"]]]
            if "__" in table:
                for row in rows:
                    owner = owners.get(row["_dlt_parent_id"])
                    if owner is not None:  # a child of an older snapshot is left out with it
                        owners[row["_dlt_id"]] = owner
                        out[owner[0]].rows[owner[1]].append((("@table", table), *_kept(row)))
                continue
            records = out[table] = Records()
            key_columns = [k for k in STREAMS[table].primary_key if k != "snapshot_at"]
            seen: Counter[str] = Counter()
            grouped: dict[str, list[Row]] = defaultdict(list)
            for row in rows:
                key = "/".join(str(row[k]) for k in key_columns)
                seen[key] += 1
                owners[row["_dlt_id"]] = (table, key)
                grouped[key].append(_kept(row))
                if row.get(DELETED) is not None:
                    records.deleted.add(key)
            records.rows = dict(grouped)
            records.duplicated = sorted(k for k, n in seen.items() if n > 1 and table not in SNAPSHOT_TABLES)
    return out


def divergence(ours: str, reference: str) -> dict[str, TableDivergence]:
    """Table -> how `ours` departs from `reference` (tables of either warehouse)."""
    mine, truth = read_records(ours), read_records(reference)
    out: dict[str, TableDivergence] = {}
    for table in sorted(mine.keys() | truth.keys()):
        have, want = mine.get(table, Records()), truth.get(table, Records())
        ghosts = sorted(have.rows.keys() - want.rows.keys())
        both = have.rows.keys() & want.rows.keys()
        out[table] = TableDivergence(
            records=len(want.rows),
            missing=sorted(want.rows.keys() - have.rows.keys()),
            ghosts_flagged=[k for k in ghosts if k in have.deleted],
            ghosts_unflagged=[k for k in ghosts if k not in have.deleted],
            flagged_alive=sorted(k for k in both if k in have.deleted),
            duplicated=have.duplicated,
            stale=sorted(k for k in both if Counter(have.rows[k]) != Counter(want.rows[k])),
        )
    return out


def stale_fields(ours: str, reference: str, table: str, key: str) -> list[tuple[str, Any, Any]]:
    """(column, ours, reference) of a stale record's root row: for messages."""
    mine, truth = read_records(ours)[table].rows[key], read_records(reference)[table].rows[key]
    a, b = dict(mine[0]), dict(truth[0])
    return [(k, a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)]
