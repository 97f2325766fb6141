"""The heads of lists sorted newest first, read on the runs that do not read them whole (issue 47).

A whole list the budget reads only every k-th run (`scan_budget.py`) would leave its new records out for
k runs. Many lists are sent newest first (comments, transfers); where the last complete scan saw the
list so, a run that does not read it whole reads its first pages, in order, until a record older than
the newest the last scan saw: the new records are then in the table every run, and changes to older
records come with the whole scans. The order is checked on every read, never assumed: a complete scan
that saw one record newer than the one before it, or a head read that sees one, forgets the order, and
the list waits for its next whole scan (`HEADS_KEY` holds only lists seen sorted).

Only a list read as one walk (`Stream.created_at` set, merged, not a fan, and lesson comments only
without `course_ids`, whose lists would each start again from the newest): a head read yields its pages
to the same road as a whole read; it is not a complete scan (no deletion is inferred from it, its cost is
not recorded) and its resource is reported not due, with what the head read brought.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from datetime import UTC, date, datetime, time
from typing import Any

import pendulum

from sources.platform.fastpath.batches import Batch, values_at
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream

# Source state key: resource -> ISO time of the newest record its last complete scan saw, for the lists
# that scan saw sorted newest first.
HEADS_KEY = "newest_first_heads"
MAX_RESTARTS = 3  # walks made again from the first page within one read (`walking.py` moves)


def reads_heads(ctx: SourceContext, stream: Stream) -> bool:
    """Whether `stream` is a list whose head can be read alone."""
    if stream.created_at is None or stream.fans_out or stream.write_disposition != "merge":
        return False
    return not (stream.name == "lesson_comments" and ctx.settings.course_ids)


class NewestFirst:
    """Watches a walk's batches in order: whether each record is no newer than the one before it, the
    newest seen, and whether a record older than `known` (the newest of the last complete scan) came."""

    def __init__(self, stream: Stream, known: datetime | None = None) -> None:
        assert stream.created_at is not None
        self._path = (stream.created_at,)
        self.known = known
        self._last: datetime | None = None
        self.restarts = 0
        self.sorted = True
        self.newest: datetime | None = None
        self.reached_known = False
        self.records = 0

    def see(self, batch: Batch) -> None:
        """One page's records, in the order the walk yields the pages."""
        values = values_at(batch, self._path)
        self.records += len(values)
        # a record without a readable creation time says nothing of the order
        moments = [moment for moment in map(as_moment, values) if moment is not None]
        if not moments:
            return
        first = moments[0]
        if self._last is not None and first > self._last:
            # A walk made again from the first page (the list moved under it) starts at the head again:
            # at least as new as anything seen. A few such restarts are a walk's; more are a list that
            # is not sorted newest first (pages of one record, oldest first, would look like restarts).
            if self.newest is not None and first >= self.newest and self.restarts < MAX_RESTARTS:
                self.restarts += 1
            else:
                self.sorted = False
        if any(later > earlier for earlier, later in zip(moments, moments[1:], strict=False)):
            self.sorted = False
        self._last = moments[-1]
        newest = max(moments)
        if self.newest is None or newest > self.newest:
            self.newest = newest
        if self.known is not None and min(moments) < self.known:
            self.reached_known = True


def note_order(heads: MutableMapping[str, str], stream: Stream, order: NewestFirst | None) -> None:
    """After a complete scan: keep the list's newest record if the scan saw it sorted, else forget it."""
    if order is not None and order.sorted and order.newest is not None:
        heads[stream.name] = order.newest.isoformat()
    else:
        heads.pop(stream.name, None)


def head_order(stream: Stream, heads: MutableMapping[str, str]) -> NewestFirst:
    """The watch of a head read of `stream`, which stops at a record older than its known newest."""
    return NewestFirst(stream, as_moment(heads[stream.name]))


def read_head(
    ctx: SourceContext, stream: Stream, heads: MutableMapping[str, str], order: NewestFirst
) -> Iterator[Batch]:
    """The first pages of `stream`'s list, until a record older than its known newest (or its end)."""
    known = order.known
    pages = stream.read(ctx, stream)
    try:
        for batch in pages:
            order.see(batch)
            yield batch
            if order.reached_known or not order.sorted:
                break
    finally:
        close = getattr(pages, "close", None)
        if close is not None:
            close()  # stops the walk's fetching ahead
    if not order.sorted:
        heads.pop(stream.name, None)  # seen out of order: the next whole scan decides again
    elif order.newest is not None and (known is None or order.newest > known):
        heads[stream.name] = order.newest.isoformat()


def as_moment(value: Any) -> datetime | None:
    """A creation time as an aware datetime (a date-only value at its midnight, UTC), or None."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = pendulum.parse(value, tz="UTC")
        except (ValueError, pendulum.parsing.exceptions.ParserError):
            return None
        return as_moment(parsed) if isinstance(parsed, date) else None
    return None
