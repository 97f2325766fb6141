"""Life histories: a record's states are a list of (time, state) events fixed at birth.

The state served at clock T is the last event at or before T, and `updatedAt`/`modifiedAt` is that
event's time, so nothing changes except when the clock passes an event.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, TypeVar

Event = tuple[int, Any]
E = TypeVar("E", bound=tuple[Any, ...])


def state_at(events: Sequence[E], t: int) -> E:
    """The last event at or before t; the first event when t precedes them all."""
    n = len(events)
    if n == 1 or events[1][0] > t:
        return events[0]
    if events[-1][0] <= t:
        return events[-1]
    k = bisect_right(events, t, key=lambda e: e[0])
    return events[max(0, k - 1)]


def time_of(events: Sequence[tuple[Any, ...]], state: Any, t: int) -> int | None:
    """When `state` was first entered, if that happened at or before t."""
    for when, s in events:
        if when > t:
            return None
        if s == state:
            return when
    return None
