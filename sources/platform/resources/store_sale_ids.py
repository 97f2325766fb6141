"""Sale ids, from the resources that discover them to `sales` (`store_sales.py`), and those kept for later
runs.

Ids come from the resources that reference sales (their declaration's `sale_ids_at`: subscriptions'
`firstInvoiceId`, fiscal documents' `sale.id`, attendees' `invoiceId`), from order bumps
(`orderBump.mainSaleId` of fetched sales), from webhooks (table `webhook_events`) and from the configured
`sale_ids`. They flow through a `SaleIdQueue` while those resources run, so the rate-limited sale
requests overlap with everything else instead of waiting for it. Ids not fetched within the run's budget
are kept in the resource state, which dlt commits together with the loaded rows, so none is ever
forgotten. The destination's `sales` table (`SaleLedger`) says which sales are known and which can
still change.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import dlt

from sources.platform.settings import FINAL_SALE_STATUSES

logger = logging.getLogger("platform_sync.source")

SALES_TABLE = "sales"
WEBHOOK_TABLE = "webhook_events"  # pipelines/webhooks/loader.py writes it into the same dataset
# The destination's columns that name a sale: channel -> (table, column). The configured `sale_ids` are
# the one channel outside the warehouse (`pipelines/sync/coverage.py` counts them all).
SALE_ID_CHANNELS: dict[str, tuple[str, str]] = {
    "subscriptions": ("subscriptions", "first_invoice_id"),
    "fiscal_documents": ("fiscal_documents", "sale__id"),
    "event_attendees": ("event_attendees", "invoice_id"),
    "order_bumps": (SALES_TABLE, "order_bump__main_sale_id"),
    "webhooks": (WEBHOOK_TABLE, "sale_id"),
}


class SaleIdQueue:
    """A run-scoped hand-off of sale ids from the resources that reference sales to `sales`."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._ids: deque[str] = deque()
        self._expected: frozenset[str] | None = None
        self._finished: set[str] = set()

    def expect(self, producers: Iterable[str]) -> None:
        """Name the producers that run in this extract; `take` ends once they have all finished."""
        with self._changed:
            self._expected = frozenset(producers)
            self._changed.notify_all()

    def offer(self, ids: Iterable[Any]) -> None:
        fresh = [str(i) for i in ids if i not in (None, "")]
        if fresh:
            with self._changed:
                self._ids.extend(fresh)
                self._changed.notify_all()

    def finish(self, producer: str) -> None:
        with self._changed:
            self._finished.add(producer)
            self._changed.notify_all()

    def take(self, timeout: float) -> list[str] | None:
        """Ids offered so far ([] if none arrived within `timeout`), or None once all producers finished."""
        with self._changed:
            if not self._ids and not self._closed():
                self._changed.wait(timeout)
            if self._ids:
                taken = list(self._ids)
                self._ids.clear()
                return taken
            return None if self._closed() else []

    def _closed(self) -> bool:
        return self._expected is not None and self._expected <= self._finished


@dataclass
class SaleLedger:
    """What the destination already holds about sales: which ids are known, which may still change, and
    in which order they were verified (fetched) last."""

    known: set[str] = field(default_factory=set)
    refresh_candidates: list[str] = field(default_factory=list)
    # Every known sale, verified longest ago first (`verified_at`, else the time of the load that brought
    # it): the re-verification cycle's order (`sales_reverify_share`).
    verify_order: list[str] = field(default_factory=list)
    # (status, updated_at) of each known sale as loaded: a fetched sale that differs has changed.
    loaded: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @classmethod
    def from_destination(cls, refresh_days: int, recheck_hours: float, now: float) -> SaleLedger:
        return cls.from_rows(_loaded_sales(), refresh_days, recheck_hours, now)

    @classmethod
    def from_rows(
        cls, rows: list[tuple[Any, ...]], refresh_days: int, recheck_hours: float, now: float
    ) -> SaleLedger:
        """Rows are (id, status, paid_at, updated_at, _dlt_load_id[, verified_at]) of the loaded sales."""
        ids = [str(row[0]) for row in rows]  # one string per sale, shared by the structures below
        ledger = cls(known=set(ids))
        ledger.loaded = {sale_id: (row[1], row[3]) for sale_id, row in zip(ids, rows, strict=True)}
        order = sorted(range(len(rows)), key=lambda i: _verified_time(rows[i]))
        ledger.verify_order = [ids[i] for i in order]
        newest = max((row[3] for row in rows if row[3] is not None), default=None)
        if newest is None:
            return ledger
        # The refund window is measured back from the newest sale update the API has shown, not from the
        # local clock, so an API whose clock differs from ours (or a simulated one) is handled alike.
        settled_before = newest - timedelta(days=refresh_days)
        recheck_before = now - recheck_hours * 3600
        candidates = [row for row in rows if _may_change(row, settled_before, recheck_before)]
        candidates.sort(key=lambda row: row[4] or "")  # least recently fetched first
        ledger.refresh_candidates = [str(row[0]) for row in candidates]
        return ledger

    def changed(self, sale: Mapping[str, Any]) -> bool:
        """Whether a fetched known sale differs from its loaded row in status or `updatedAt`."""
        before = self.loaded.get(str(sale.get("id")))
        if before is None:
            return False
        status, updated_at = before
        if sale.get("status") != status:
            return True
        return _instant(sale.get("updatedAt")) != _instant(updated_at)


def _verified_time(row: tuple[Any, ...]) -> tuple[float, str]:
    """When a loaded sale was last verified, as a unix time (never: 0), then its id, for a stable order."""
    verified = row[5] if len(row) > 5 else None
    when = verified.timestamp() if isinstance(verified, datetime) else _load_time(row[4])
    return when, str(row[0])


def _instant(value: Any) -> float | None:
    """A timestamp (text from the API, a datetime from the destination) as a unix time, if it is one."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _may_change(row: tuple[Any, ...], settled_before: datetime, recheck_before: float) -> bool:
    """Whether a loaded sale may have changed since it was fetched (in the load `row[4]`).

    Sales still on their way (waiting for payment, processing...) are fetched again on every run. A paid
    sale can still be refunded during the refund window, but that is rare: it is checked again at most
    once every `sales_recheck_hours` (the load id is the load's unix time).
    """
    status, paid_at, load_id = row[1], row[2], row[4]
    if status in FINAL_SALE_STATUSES:
        return False
    if status != "paid":
        return True
    if paid_at is not None and paid_at < settled_before:
        return False
    return _load_time(load_id) <= recheck_before


def _load_time(load_id: Any) -> float:
    try:
        return float(load_id)
    except (TypeError, ValueError):
        return 0.0


def announced_sale_ids(after_load_id: str | None) -> tuple[list[str], str | None]:
    """Sale ids that webhook deliveries loaded after `after_load_id` announced (paid, refunded: any
    invoice event), oldest first, and the newest load id seen (None when there is none).

    They go to the front of this run's sale details so a sale the platform says changed is fresh after
    the run however long the backlog is; the caller keeps the load id in the resource state, committed
    with the sales it fetched."""
    try:
        pipeline = dlt.current.pipeline()
        with pipeline.sql_client() as client:
            table = client.make_qualified_table_name(WEBHOOK_TABLE)
            rows = client.execute_sql(
                f"select sale_id, _dlt_load_id from {table} where sale_id is not null "
                "and _dlt_load_id > %s order by _dlt_load_id, received_at, id",
                after_load_id or "",
            )
    except Exception as exc:  # no pipeline, no webhook table (no receiver), a destination without SQL
        logger.debug("no webhook announcements in the destination (%s)", exc)
        return [], None
    ids = list(dict.fromkeys(str(row[0]) for row in rows or []))
    newest = max((str(row[1]) for row in rows or []), default=None)
    return ids, newest


def unloaded_sale_ids(rebuilding: bool) -> list[str]:
    """The sale ids the destination's tables name (`SALE_ID_CHANNELS`) that `sales` does not hold, sorted:
    the backlog whatever lost it (a dropped or emptied `sales` table, a restored backup, lost pending
    ids). When `rebuilding` (this run's load replaces the tables: `sync --full-refresh`), the sales
    loaded so far are named too, since the load drops them: every sale the warehouse held comes back."""
    try:
        pipeline = dlt.current.pipeline()
        with pipeline.sql_client() as client:
            named = [
                query
                for table, column in SALE_ID_CHANNELS.values()
                if (query := ids_query(client, table, column))
            ]
            loaded = ids_query(client, SALES_TABLE, "id")
            if rebuilding and loaded:
                named.append(loaded)
            if not named:
                return []
            union = " union ".join(named)
            if loaded and not rebuilding:
                union = f"({union}) except ({loaded})"
            rows = client.execute_sql(f"select x from ({union}) as unloaded order by x")
    except Exception as exc:  # no pipeline, a destination without SQL: the queue and pending ids only
        logger.debug("no sale ids named in the destination (%s)", exc)
        return []
    return [str(row[0]) for row in rows or []]


def ids_query(client: Any, table: str, column: str) -> str:
    """`select distinct <the id as text> as x` of one table's column, or "" when it is not there."""
    name = client.make_qualified_table_name(table)
    query = f"select distinct cast({column} as varchar) as x from {name} where {column} is not null"
    try:
        client.execute_sql(f"select x from ({query}) as probe limit 0")  # binds the names, reads no rows
    except Exception as exc:
        logger.debug("no sale ids from %s.%s (%s)", table, column, exc)
        return ""
    return query


def _loaded_sales() -> list[tuple[Any, ...]]:
    """(id, status, paid_at, updated_at, _dlt_load_id, verified_at) of the sales in the destination, if it
    can tell (`verified_at` None in a table loaded before the column existed)."""
    columns = "id, status, paid_at, updated_at, _dlt_load_id"
    try:
        return _select_sales(f"{columns}, verified_at")
    except Exception:  # a table loaded before `verified_at` existed, or none: asked again without it
        pass
    try:
        return [(*row, None) for row in _select_sales(columns)]
    except Exception as exc:  # no pipeline, no table yet, or a destination without SQL
        logger.debug("no sales ledger in the destination (%s): every discovered sale is fetched", exc)
        return []


def _select_sales(columns: str) -> list[tuple[Any, ...]]:
    pipeline = dlt.current.pipeline()
    with pipeline.sql_client() as client:  # a client of its own: a failed query may end a transaction
        table = client.make_qualified_table_name(SALES_TABLE)
        rows = client.execute_sql(f"select {columns} from {table}")
    return [tuple(row) for row in rows or []]


def pending_sale_ids(state: Mapping[str, Any]) -> list[str]:
    """The sale ids an earlier run left for the next (`keep_pending_sale_ids`), sorted."""
    value = state.get("pending")
    if not value:
        return []
    if isinstance(value, str):
        return value.split("\n")
    return sorted({str(item) for item in value})  # a state written before ids were kept as one text


def keep_pending_sale_ids(state: dict[str, Any], ids: Iterable[Any]) -> None:
    """Keep `ids` (deduplicated, sorted) in the sales resource's `state` for the next run, replacing what
    was kept. As one newline-separated text: a first sync without `sales`, or one whose sale budget
    ran out, can leave most of a million ids, and as many strings in dlt's state cost memory and time
    (dlt copies, hashes and serializes the state with each package); one text costs its bytes."""
    unique = {str(item) for item in ids}
    unique.discard("")
    state["pending"] = "\n".join(sorted(unique))


def drain(queue: SaleIdQueue, known: set[str]) -> list[str]:
    """Collect every id still offered until the producers finish (when sales cannot be fetched)."""
    ids: list[str] = []
    while (taken := queue.take(timeout=0.5)) is not None:
        ids.extend(i for i in taken if i not in known)
    return ids
