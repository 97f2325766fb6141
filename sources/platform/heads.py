"""The new records of sorted lists, read on the runs that do not read them whole (issue 47).

A whole list the budget reads only every k-th run (`scan_budget.py`) would leave its new records out for
k runs. Many lists are sorted by creation: where the last complete scan saw the list so, a run that does
not read it whole reads only where new records come, until a record older than the newest it knew:

- **newest first** (comments, transfers of many APIs): its *head*, the first pages, in order;
- **oldest first** (the sandbox's own order): its *tail*, the last pages, the last first
  (`walking.walk_tail`), from the last page the previous read saw, whose answer says how many pages the
  list has now.

The new records are then in the table every run, and changes to older records come with the whole scans.
The order is checked on every read, never assumed: a complete scan that saw one record out of the order,
or a head or tail read that sees one, forgets the order, and the list waits for its next whole scan
(`HEADS_KEY` and `TAILS_KEY` hold only lists seen sorted).

Only a list read as one walk (`Stream.created_at` set, merged, not a fan, and lesson comments only
without `course_ids`, whose lists would each start again from the newest): such a read yields its pages
to the same road as a whole read; it is not a complete scan (no deletion is inferred from it, its cost is
not recorded) and its resource is reported not due, with what the read brought.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from datetime import UTC, date, datetime, time
from typing import Any

import pendulum

from sources.platform.fastpath.batches import Batch, values_at
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream

# Source state keys, by resource. Heads: the ISO time of the newest record the last read saw, for the
# lists seen sorted newest first. Tails, for the lists seen sorted oldest first: that time (`newest`), the
# server's first page number (`first`: 0 or 1) and the last page the last read saw (`last`).
HEADS_KEY = "newest_first_heads"
TAILS_KEY = "oldest_first_tails"
MAX_RESTARTS = 3  # walks made again from the first page within one read (`walking.py` moves)

Span = tuple[int, int]  # the first and last page numbers a read saw


def reads_heads(ctx: SourceContext, stream: Stream) -> bool:
    """Whether `stream` is a list whose new records can be read alone (its head or its tail)."""
    if stream.created_at is None or stream.fans_out or stream.write_disposition != "merge":
        return False
    return not (stream.name == "lesson_comments" and ctx.settings.course_ids)


class ListOrder:
    """Watches a read's batches in the order it yields them: whether the records keep one order by creation
    (`newest_first`, or oldest first), the newest seen, and whether a record older than `known` (the
    newest of the last read) came. `backwards`: the pages come last first (a tail read), each page still
    in the list's order."""

    def __init__(
        self, stream: Stream, newest_first: bool, known: datetime | None = None, backwards: bool = False
    ) -> None:
        assert stream.created_at is not None
        self._path = (stream.created_at,)
        self.newest_first = newest_first
        self.backwards = backwards
        self.known = known
        self._edge: tuple[datetime, datetime] | None = None  # the previous page's first and last record
        self.restarts = 0
        self.sorted = True
        self.newest: datetime | None = None
        self.oldest: datetime | None = None
        self.reached_known = False
        self.records = 0

    def see(self, batch: Batch) -> None:
        """One page's records, in the order the read yields the pages."""
        values = values_at(batch, self._path)
        self.records += len(values)
        # a record without a readable creation time says nothing of the order
        moments = [moment for moment in map(as_moment, values) if moment is not None]
        if not moments:
            return
        pairs = list(zip(moments, moments[1:], strict=False))
        if any(later > earlier if self.newest_first else later < earlier for earlier, later in pairs):
            self.sorted = False
        if self._edge is not None and not self._follows(moments[0], moments[-1], *self._edge):
            self.sorted = False
        self._edge = (moments[0], moments[-1])
        newest, oldest = max(moments), min(moments)
        self.newest = newest if self.newest is None else max(self.newest, newest)
        self.oldest = oldest if self.oldest is None else min(self.oldest, oldest)
        if self.known is not None and oldest < self.known:
            self.reached_known = True

    def _follows(
        self, first: datetime, last: datetime, before_first: datetime, before_last: datetime
    ) -> bool:
        """Whether a page (`first` .. `last`) may follow the page before it in this read."""
        if self.backwards:  # the page before it in the list comes after it in the read
            return last <= before_first if not self.newest_first else last >= before_first
        if first <= before_last if self.newest_first else first >= before_last:
            return True
        # A walk made again from the first page (the list moved under it) starts at the head again: at
        # least as new (newest first) or as old (oldest first) as anything seen. A few such restarts are a
        # walk's; more are a list sorted the other way (pages of one record look like restarts).
        assert self.newest is not None and self.oldest is not None
        restart = first >= self.newest if self.newest_first else first <= self.oldest
        if restart and self.restarts < MAX_RESTARTS:
            self.restarts += 1
            return True
        return False


class ScanOrder:
    """A complete scan's watch of both orders (a list of one creation time is sorted both ways: newest
    first wins, as the head of a list of one page is all of it)."""

    def __init__(self, stream: Stream) -> None:
        self.newest_first = ListOrder(stream, newest_first=True)
        self.oldest_first = ListOrder(stream, newest_first=False)

    def see(self, batch: Batch) -> None:
        self.newest_first.see(batch)
        self.oldest_first.see(batch)


def note_order(
    state: MutableMapping[str, Any], stream: Stream, order: ScanOrder | None, span: Span | None
) -> None:
    """After a complete scan: keep how to read the list's new records if the scan saw it sorted (its
    pages `span`), else forget it."""
    heads: dict[str, str] = state.setdefault(HEADS_KEY, {})
    tails: dict[str, dict[str, Any]] = state.setdefault(TAILS_KEY, {})
    heads.pop(stream.name, None)
    tails.pop(stream.name, None)
    if order is None:
        return
    if order.newest_first.sorted and order.newest_first.newest is not None:
        heads[stream.name] = order.newest_first.newest.isoformat()
    elif order.oldest_first.sorted and order.oldest_first.newest is not None and span is not None:
        tails[stream.name] = {
            "newest": order.oldest_first.newest.isoformat(),
            "first": span[0],
            "last": span[1],
        }


def head_order(stream: Stream, heads: MutableMapping[str, str]) -> ListOrder:
    """The watch of a head read of `stream`, which stops at a record older than its known newest."""
    return ListOrder(stream, newest_first=True, known=as_moment(heads[stream.name]))


def tail_order(stream: Stream, tails: MutableMapping[str, dict[str, Any]]) -> ListOrder:
    """The watch of a tail read of `stream`, which stops at a record older than its known newest."""
    return ListOrder(
        stream, newest_first=False, known=as_moment(tails[stream.name]["newest"]), backwards=True
    )


def tail_span(stream: Stream, tails: MutableMapping[str, dict[str, Any]]) -> Span:
    """The server's first page number and the last page the last read of `stream` saw."""
    tail = tails[stream.name]
    return int(tail["first"]), int(tail["last"])


def read_until_known(ctx: SourceContext, stream: Stream, order: ListOrder) -> Iterator[Batch]:
    """The pages of `stream`'s read (its head, or its tail through a client that walks tails), until a
    record older than its known newest, a record out of order, or the list's end."""
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


def note_head(heads: MutableMapping[str, str], stream: Stream, order: ListOrder) -> None:
    """After a head read: its newest record kept, or the order forgotten if it saw one out of order."""
    if not order.sorted:
        heads.pop(stream.name, None)  # the next whole scan decides again
    elif order.newest is not None and (order.known is None or order.newest > order.known):
        heads[stream.name] = order.newest.isoformat()


def note_tail(
    tails: MutableMapping[str, dict[str, Any]], stream: Stream, order: ListOrder, span: Span | None
) -> None:
    """After a tail read: its newest record and the list's last page kept, or the order forgotten if it
    saw one out of order."""
    if not order.sorted:
        tails.pop(stream.name, None)
        return
    tail = tails[stream.name]
    if order.newest is not None and (order.known is None or order.newest > order.known):
        tail["newest"] = order.newest.isoformat()
    if span is not None:
        tail["last"] = span[1]


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
