"""Child tables loaded under append get dlt's root key before their root table is first merged.

The community snapshots were appended until 2026-12-06, when a failed load split a snapshot from its
child rows (dlt loads an appended table and each of its child tables as separate jobs); they are merged
since, so that a snapshot and its child rows are one transaction. dlt's merge gives the child tables a
`_dlt_root_id` column, NOT NULL, which it cannot add to a table that has rows ("NOT NULL constraint
failed: community_commenters__posts._dlt_root_id": every warehouse made before would fail its load). So
before a sync's load, a child table of those streams that exists without the column gets it here,
nullable, filled from its parent rows (a child of the root: its parent's row id; deeper: its parent's
root), through the pipeline's `sql_client()` (dlt's public API); dlt then finds the column and adds
nothing. A warehouse made since has the column: one query of the information schema, and nothing done.
"""

from __future__ import annotations

import logging
from typing import Any

import dlt

from pipelines.sync.orphans import child_tables

logger = logging.getLogger("platform_sync.pipeline")

# The streams loaded as append before they were merged (`sources/platform/resources/community.py`).
MERGED_SINCE_APPEND = frozenset({"community_top_posts", "community_commenters"})
ROOT_KEY = "_dlt_root_id"


def add_root_keys(pipeline: dlt.Pipeline) -> list[str]:
    """Give the child tables of `MERGED_SINCE_APPEND` that lack it the root key column, filled; the
    tables changed. A failure is said, and the load then says what dlt could not do."""
    if not pipeline.default_schema_name:
        return []
    tables = pipeline.default_schema.tables
    pairs = [
        (child, parent)
        for child, parent in child_tables(pipeline)
        if _root(tables, child) in MERGED_SINCE_APPEND
    ]
    if not pairs:
        return []
    changed: list[str] = []
    try:
        with pipeline.sql_client() as client:
            columns = _columns(client, [child for child, _ in pairs])
            for child, parent in pairs:
                if child in columns and ROOT_KEY not in columns[child]:
                    _fill(client, child, parent, parent_is_root=not tables[parent].get("parent"))
                    changed.append(child)
    except Exception as exc:  # the destination would not open: the load meets the same and says it
        logger.warning("the root key of the community snapshots' child tables could not be added: %s", exc)
    for table in changed:
        logger.info(
            "%s: root key column added for the merged snapshots (rows loaded before as appended)", table
        )
    return changed


def _root(tables: dict[str, Any], name: str) -> str:
    while (parent := tables.get(name, {}).get("parent")) is not None:
        name = str(parent)
    return name


def _columns(client: Any, names: list[str]) -> dict[str, set[str]]:
    """The columns of those of `names` that are tables of the dataset."""
    placeholders = ", ".join(["%s"] * len(names))
    rows = client.execute_sql(
        "select table_name, column_name from information_schema.columns "
        f"where table_schema = %s and table_name in ({placeholders})",
        client.dataset_name,
        *names,
    )
    found: dict[str, set[str]] = {}
    for table, column in rows or []:
        found.setdefault(str(table), set()).add(str(column))
    return found


def _fill(client: Any, child: str, parent: str, *, parent_is_root: bool) -> None:
    child_name = client.make_qualified_table_name(child)
    parent_name = client.make_qualified_table_name(parent)
    root_of_row = (
        "_dlt_parent_id"
        if parent_is_root
        else f"(select p.{ROOT_KEY} from {parent_name} as p where p._dlt_id = {child_name}._dlt_parent_id)"
    )
    with client.begin_transaction():
        client.execute_sql(f"alter table {child_name} add column {ROOT_KEY} varchar")
        client.execute_sql(f"update {child_name} set {ROOT_KEY} = {root_of_row}")
