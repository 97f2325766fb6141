"""Subscriptions whose renewal fell due since they were read, read again by id (`subscription_details`).

The API changes a subscription's charges and due dates at its renewal without moving `updatedAt` until
the payment, so the update filter of `list_subscriptions` does not show the change for a while. Each
subscription row says when it was read (`_platform_read_at`, the start of that run by the API's clock);
a row whose `recurrence.nextDueDate` is later than that read and not later than the start of this run
was read before its renewal, and is read again, earliest due first, within the run's budget of renewal
re-reads (`run_budget.py`: a share of the operation's requests between two runs, at most
`renewals_max_requests`). Its new row is stamped with this run's time, so it is read once per due date.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Set
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import dlt

from sources.platform.fastpath.batches import Rows
from sources.platform.run_budget import RENEWAL_READS, RENEWALS
from sources.platform_client.errors import NotFoundError

if TYPE_CHECKING:
    from sources.platform.resources.context import SourceContext
    from sources.platform.resources.stream import Stream

logger = logging.getLogger("platform_sync.source")

READ_AT = "_platform_read_at"
READ_AT_COLUMN: dict[str, Any] = {"data_type": "timestamp", "timezone": True, "nullable": True}
DUE_COLUMN = "recurrence__next_due_date"
_BATCH = 100


def read_time(ctx: SourceContext) -> datetime:
    """The time a row read in this run is stamped with: the run's start by the earlier of both clocks."""
    clock = ctx.report.run_clock
    return ctx.snapshot_at if clock is None else clock.cursor_bound()


def read_renewals(ctx: SourceContext, stream: Stream, read_in_this_run: Set[str]) -> Iterator[Rows]:
    """The subscriptions due for a renewal re-read, read by id within the budget (module docstring)."""
    now = read_time(ctx)
    due = [sid for sid, due_at in ctx.renewals if _utc(due_at) <= now and sid not in read_in_this_run]
    batch: Rows = []
    wanted = due[: ctx.budget.renewals.per_run]
    for _, answer in ctx.client.each(RENEWALS, wanted, lambda sid: {"id": sid}):
        ctx.report.spent.spend(RENEWAL_READS)
        try:
            record = answer.result()
        except NotFoundError:
            continue  # gone from the platform: nothing to read
        batch.extend(row for row, _ in ctx.records.read(stream, [record], {READ_AT: now}))
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def pending_renewals(table: str, budget: int) -> list[tuple[str, datetime]]:
    """(id, due date) of the `budget` loaded subscriptions with the earliest due date later than their
    read; the reader keeps those due by the start of the run. Asked before the extract starts (from
    the source function, in the caller's thread): a destination query from an extract thread while
    another runs one upsets dlt's configuration contexts. None when the destination cannot tell (no
    pipeline, no table yet, no SQL, a table loaded before `_platform_read_at`)."""
    if budget <= 0:
        return []
    try:
        pipeline = dlt.current.pipeline()
        with pipeline.sql_client() as client:
            name = client.make_qualified_table_name(table)
            rows = client.execute_sql(
                f"select id, {DUE_COLUMN} from {name} where {READ_AT} < {DUE_COLUMN} "
                f"order by {DUE_COLUMN}, id limit {int(budget)}"
            )
    except Exception as exc:
        logger.debug("no renewals to re-read (%s)", exc)
        return []
    return [(str(row[0]), row[1]) for row in rows or [] if isinstance(row[1], datetime)]


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
