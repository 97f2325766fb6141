"""Child rows whose parent row is not in the warehouse, removed after each sync's load (issue 53).

dlt loads a package one table at a time, each in its own transaction, so a run killed during its load
can leave some tables of the package loaded and others not: the child rows of records whose own row
never landed (`subscriptions__products` without their subscription). The working folder keeps the
package and the next run finishes it; but when the folder is lost too (a CI runner that starts empty, a
container without a volume) the next run goes on from the warehouse's last complete state, loads those
records again under new row ids, and the children of the lost load stay behind, counted twice by every
join. A child row is the child of one parent row (`_dlt_parent_id` = the parent's `_dlt_id`): one without
it is of no record, and is deleted, table by table from the root down. The query is an anti-join per child
table through the pipeline's `sql_client()` (dlt's public API); a table or column not there is passed.
"""

from __future__ import annotations

import logging
from typing import Any

import dlt

from pipelines.sync.run_client import SqlClients

logger = logging.getLogger("platform_sync.pipeline")


def child_tables(pipeline: dlt.Pipeline) -> list[tuple[str, str]]:
    """(child, parent) of every child table of the pipeline's schema, parents before their children (the
    children of a removed orphan are orphans in their turn)."""
    if not pipeline.default_schema_name:
        return []
    tables = pipeline.default_schema.tables
    pairs = [(name, str(table["parent"])) for name, table in tables.items() if table.get("parent")]

    def depth(name: str) -> int:
        level = 0
        while (parent := tables.get(name, {}).get("parent")) is not None:
            name, level = str(parent), level + 1
        return level

    return sorted(pairs, key=lambda pair: (depth(pair[0]), pair[0]))


def remove_orphans(pipeline: dlt.Pipeline, sql: SqlClients | None = None) -> dict[str, int]:
    """Delete the child rows without a parent row; the number deleted per table (only tables with some),
    each said in one line. A failure is said and leaves the rows for the next run. `sql`: the run's client
    (`run_client.py`), else one of its own."""
    removed: dict[str, int] = {}
    pairs = child_tables(pipeline)
    if not pairs:
        return removed
    try:
        with (sql or pipeline.sql_client)() as client:
            for child, parent in pairs:
                count = _remove(client, child, parent)
                if count:
                    removed[child] = count
    except Exception as exc:  # the destination would not open: the next run looks again
        logger.warning("child rows without a parent could not be looked for: %s", exc)
    for table, count in removed.items():
        logger.warning(
            "%s: %s rows without a parent row removed (left by a load that did not finish)", table, count
        )
    return removed


def _remove(client: Any, child: str, parent: str) -> int:
    child_name = client.make_qualified_table_name(child)
    parent_name = client.make_qualified_table_name(parent)
    orphaned = f"not exists (select 1 from {parent_name} as p where p._dlt_id = c._dlt_parent_id)"
    try:
        rows = client.execute_sql(f"select count(*) from {child_name} as c where {orphaned}")
    except Exception as exc:  # the table is not in the warehouse (never loaded): nothing to look at
        logger.debug("no orphans looked for in %s (%s)", child, exc)
        return 0
    count = int(rows[0][0]) if rows else 0
    if count:
        client.execute_sql(f"delete from {child_name} as c where {orphaned}")
    return count
