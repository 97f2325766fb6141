"""Sales coverage and verification after a sync: how many sales are known, through which channel, and
how long ago the least recently verified one was fetched.

The API cannot list sales: a sale is known only through a channel that names it (a subscription's
first invoice, a fiscal document, an attendee's invoice, an order bump's main sale, a webhook, the
configured `sale_ids`). `sales_coverage` counts, per channel, the sale ids it names in the warehouse
and how many of them are loaded in `sales` or retired (`sources/platform/retired.py`); it is written to
`_platform_sales_coverage` by the run record (`runs.py`) and printed in the summary.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import dlt

from pipelines.sync.run_client import SqlClients
from sources.platform.resources.store_sale_ids import SALE_ID_CHANNELS, ids_query

logger = logging.getLogger("platform_sync.pipeline")

COVERAGE_TABLE = "_platform_sales_coverage"
COVERAGE_COLUMNS: dict[str, Any] = {
    "channel": {"data_type": "text", "nullable": False, "primary_key": True},
    "named": {"data_type": "bigint", "nullable": False},
    "loaded": {"data_type": "bigint", "nullable": False},
    "retired": {"data_type": "bigint", "nullable": False},
    "checked_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
}
CHANNELS = SALE_ID_CHANNELS  # `sale_ids` (configured) and `all` are added to these
CONFIGURED, ALL = "sale_ids", "all"
HOW_TO_COMPLETE = (
    "to find the others, run `platform-sync webhooks serve` and `webhooks load` (each paid sale is "
    "announced) or list known sale ids in `sale_ids`"
)


def sales_coverage(
    pipeline: dlt.Pipeline,
    configured: Sequence[str],
    retired: Iterable[str],
    checked_at: dt.datetime,
    sql: SqlClients | None = None,
) -> list[dict[str, Any]]:
    """One row per channel and one for their union (`all`): sale ids named, loaded in `sales`, retired.
    Counted by the destination (a million ids need not come to Python)."""
    retired_ids = set(retired)
    try:
        # One connection for every count (opening one per statement cost DuckDB a database open and
        # close each). Each statement runs on its own outside a transaction (dlt's clients autocommit):
        # the probe of a channel whose table is not there fails alone.
        with (sql or pipeline.sql_client)() as client:
            sources: dict[str, str] = {}  # channel -> a query of the distinct sale ids it names
            for channel, (table, column) in CHANNELS.items():
                sources[channel] = ids_query(client, table, column)
            ids = sorted({str(i) for i in configured if str(i)})
            values = ", ".join("('" + i.replace("'", "''") + "')" for i in ids)
            sources[CONFIGURED] = f"select distinct x from (values {values}) as v(x)" if ids else ""
            present = [query for query in sources.values() if query]
            sources[ALL] = " union ".join(present)
            loaded = ids_query(client, "sales", "id") or "select cast(null as varchar) as x where false"
            return [
                {"channel": channel, **_counted(client, query, loaded, retired_ids), "checked_at": checked_at}
                for channel, query in sources.items()
            ]
    except Exception as exc:  # counting must never turn a finished sync into a failure
        logger.warning("could not count the sales coverage (%s): it is not recorded this run", exc)
        return []


def _counted(client: Any, query: str, loaded_ids: str, retired: set[str]) -> dict[str, int]:
    if not query:
        return {"named": 0, "loaded": 0, "retired": 0}
    joined = f"({query}) as named left join ({loaded_ids}) as loaded on loaded.x = named.x"
    counts = client.execute_sql(f"select count(*), count(loaded.x) from {joined}") or [(0, 0)]
    named, loaded = counts[0]
    gone = 0
    if retired and named > loaded:
        rows = client.execute_sql(f"select named.x from {joined} where loaded.x is null") or []
        gone = sum(1 for (sale_id,) in rows if str(sale_id) in retired)
    return {"named": int(named), "loaded": int(loaded), "retired": gone}


def partial_reasons(coverage: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why the known sales are not all the account's sales (empty: as complete as the sync can tell)."""
    rows = {row["channel"]: row for row in coverage}
    reasons = []
    if rows.get("webhooks", {}).get("named", 0) == 0:
        reasons.append(
            "no webhook announcement is loaded, so a sale without subscription, fiscal document or "
            "attendee is never found"
        )
    every = rows.get(ALL)
    if every is not None and (waiting := every["named"] - every["loaded"] - every["retired"]) > 0:
        reasons.append(f"{waiting:,} named sales are not fetched yet (the run's budget of sale details)")
    return reasons


def coverage_lines(coverage: Sequence[Mapping[str, Any]]) -> list[str]:
    """The summary's lines: the sales known by channel, and whether coverage is partial and what to do."""
    rows = {row["channel"]: row for row in coverage}
    if ALL not in rows:
        return []
    names = [name for name in (*CHANNELS, CONFIGURED) if name in rows]
    channels = ", ".join(f"{name.replace('_', ' ')} {rows[name]['named']:,}" for name in names)
    every = rows[ALL]
    retired = f", {every['retired']:,} retired (unknown to the API)" if every["retired"] else ""
    lines = [f"sales known: {every['loaded']:,} of {every['named']:,} named{retired}; named by {channels}"]
    if reasons := partial_reasons(coverage):
        lines.append(f"sales coverage is partial: {'; '.join(reasons)}; {HOW_TO_COMPLETE}")
    return lines


def sales_verification(
    pipeline: dlt.Pipeline, sql: SqlClients | None = None
) -> tuple[int, dt.datetime | None] | None:
    """(rows in `sales`, the oldest `verified_at`), or None when the destination cannot tell."""
    try:
        with (sql or pipeline.sql_client)() as client:
            table = client.make_qualified_table_name("sales")
            rows = client.execute_sql(f"select count(*), min(verified_at) from {table}")
    except Exception as exc:  # no sales table, or one without `verified_at`
        logger.debug("no sales verification in the destination (%s)", exc)
        return None
    count, oldest = rows[0] if rows else (0, None)
    return int(count), oldest
