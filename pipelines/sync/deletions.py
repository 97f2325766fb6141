"""Records deleted on the platform, marked in the warehouse after the sync's load (issue 25).

A resource read whole (`Stream.marks_deletions`) whose scan in this run was complete tells which
records exist: a row of its table whose key that scan did not see was deleted on the platform. Its row
stays (the history and the facts that point at it) with `_platform_deleted_at` set to the run's start by
the API's clock; a row that comes back is loaded again by the merge with the column null. The children of
a deleted record (`Stream.deleted_with`: a product's campaigns and partners) take their parent's time.

A configured parent the API cannot list (an event, a student, a delivery) is deleted when its own request
answers 404 (`RunReport.gone`): the rows naming it in the resource that asked (`Stream.gone_by`: the
event's row, its attendees, the student's enrollments, the delivery's row) are marked. A 403, a 5xx or a
failed page records nothing; a resource that failed or was skipped marks nothing. A parent that comes
back is loaded again by the merge, which clears the column (the attendees of an event that answered 404
are read whole again: its cursor is dropped, `resources/events.py`).

Done after the load, through the pipeline's own `sql_client()` (dlt's public API), rather than by
yielding the missing rows again: the source never holds a deleted record's row, and an update touches
only the column. A scan that did not complete never reaches `RunReport.scan_complete`; one whose
resource failed, was skipped or quarantined a record (whose key may be one of the missing) marks nothing;
a run whose load failed never gets here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import dlt
from dlt.destinations.exceptions import DatabaseUndefinedRelation

from pipelines.sync.run_client import SqlClients
from sources.platform.report import RunReport
from sources.platform.resources import STREAMS
from sources.platform.resources.stream import DELETED_AT
from sources.platform.seen_keys import SeenKeys, seen

logger = logging.getLogger("platform_sync.deletions")

_CHUNK = 500  # keys per update statement


def mark_deletions(
    pipeline: dlt.Pipeline, report: RunReport, deleted_at: datetime, sql: SqlClients | None = None
) -> dict[str, int]:
    """Mark the rows not seen by this run's complete scans; the number newly marked per table.

    One connection for all of it: opening one per statement cost DuckDB a database open and close each
    (about 40 ms; a small incremental sync spent a second here). Every statement runs on its own outside
    a transaction (dlt's clients autocommit), so one that fails leaves the connection to the next. `sql`:
    the run's client (`run_client.py`), else one of its own."""
    marked: dict[str, int] = {}
    try:
        with (sql or pipeline.sql_client)() as client:
            _mark_all(client, report, deleted_at, marked)
    except Exception as exc:  # the destination would not open: the next complete scans mark them
        report.warn(f"deleted records could not be marked: {exc}")
    return {table: count for table, count in marked.items() if count}


def _mark_all(client: Any, report: RunReport, deleted_at: datetime, marked: dict[str, int]) -> None:
    for resource, scanned in sorted(report.scanned_keys.items()):
        if resource in report.failed or resource in report.skipped:
            continue
        if report.departures.quarantined(resource):
            logger.info("%s: a record was quarantined, so its scan marks no deletion", resource)
            continue
        try:
            marked[resource] = _mark_missing(client, resource, scanned, deleted_at)
        except Exception as exc:  # the sync is loaded; a missed marking is made by the next scan
            report.warn(f"deleted {resource} could not be marked: {exc}")
    for resource, parents in sorted(report.gone.items()):
        if resource in report.failed or resource in report.skipped:
            continue
        try:
            gone = _mark_gone(client, resource, parents, deleted_at)
            marked[resource] = marked.get(resource, 0) + gone
        except Exception as exc:  # the sync is loaded; the next 404 marks them
            report.warn(f"the {resource} of parents that answered 404 could not be marked: {exc}")
    for child in STREAMS.values():
        if child.deleted_with and child.deleted_with in marked:
            try:
                followed = _follow_parent(client, child.name, child.deleted_with)
                marked[child.name] = marked.get(child.name, 0) + followed
            except Exception as exc:
                parent = child.deleted_with
                report.warn(f"the children in {child.name} of deleted {parent} could not be marked: {exc}")


def _mark_missing(client: Any, resource: str, scanned: SeenKeys, at: datetime) -> int:
    key = STREAMS[resource].primary_key
    columns = ", ".join(key)
    table = client.make_qualified_table_name(resource)
    rows = client.execute_sql(f"select {columns} from {table} where {DELETED_AT} is null") or []
    lookup = scanned.lookup()
    missing = [tuple(row) for row in rows if not seen(lookup, tuple(str(value) for value in row))]
    for chunk in _chunks(missing, _CHUNK):
        condition = " or ".join("(" + " and ".join(f"{c} = %s" for c in key) + ")" for _ in chunk)
        client.execute_sql(
            f"update {table} set {DELETED_AT} = %s where {DELETED_AT} is null and ({condition})",
            at,
            *[value for row in chunk for value in row],
        )
    if missing:
        logger.info("%s: %d records no longer on the platform marked deleted", resource, len(missing))
    return len(missing)


def _mark_gone(client: Any, resource: str, parents: set[tuple[str, ...]], at: datetime) -> int:
    """Mark the unmarked rows of `resource` whose `gone_by` columns name a parent that answered 404."""
    columns = STREAMS[resource].gone_by
    same = " and ".join(f"cast({c} as varchar) = %s" for c in columns)
    newly = 0
    table = client.make_qualified_table_name(resource)
    for parent in sorted(parents):
        try:
            rows = client.execute_sql(
                f"select count(*) from {table} where {DELETED_AT} is null and {same}", *parent
            )
        except DatabaseUndefinedRelation:
            return 0  # nothing of this resource was ever loaded
        count = int(rows[0][0]) if rows else 0
        if count:
            client.execute_sql(
                f"update {table} set {DELETED_AT} = %s where {DELETED_AT} is null and {same}", at, *parent
            )
        newly += count
    if newly:
        logger.info("%s: %d records of parents that answered 404 marked deleted", resource, newly)
    return newly


def _follow_parent(client: Any, child: str, parent: str) -> int:
    """Give each unmarked child row of a deleted parent its parent's deletion time; the number marked.
    (A child that comes back is cleared by its own scan's merge, as any row.)"""
    foreign = STREAMS[child].primary_key[0]  # the parent's id comes first in a child's key
    parent_key = STREAMS[parent].primary_key[0]
    children = client.make_qualified_table_name(child)
    parents = client.make_qualified_table_name(parent)
    same = f"cast(p.{parent_key} as varchar) = cast(c.{foreign} as varchar)"
    match = f"{same} and p.{DELETED_AT} is not null"
    try:
        newly = client.execute_sql(
            f"select count(*) from {children} as c where c.{DELETED_AT} is null "
            f"and exists (select 1 from {parents} as p where {match})"
        )
    except DatabaseUndefinedRelation:
        return 0  # no child of this resource was ever loaded (it was not asked for)
    client.execute_sql(
        f"update {children} as c set {DELETED_AT} = p.{DELETED_AT} from {parents} as p "
        f"where {match} and c.{DELETED_AT} is null"
    )
    return int(newly[0][0]) if newly else 0


def deletion_time(report: RunReport) -> datetime:
    """The run's start by the API's clock (its records' clock), else by ours."""
    clock = report.run_clock
    if clock is None:
        return datetime.now(UTC)
    return clock.server_start() or clock.started_at


def deletion_summary(marked: dict[str, int]) -> str | None:
    """The summary's line: tables and the rows newly marked deleted in this run."""
    if not marked:
        return None
    counts = ", ".join(f"{table} {count}" for table, count in sorted(marked.items()))
    return f"deleted: {counts} (records no longer on the platform; {DELETED_AT} set, left out of the marts)"


def _chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
