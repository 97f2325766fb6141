"""Life histories: a record's states are a list of (time, state) events fixed at birth.

The state served at clock T is the last event at or before T, and `updatedAt`/`modifiedAt` is that
event's time, so nothing changes except when the clock passes an event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

Event = tuple[int, Any]
E = TypeVar("E", bound=tuple[Any, ...])


def state_at(events: Sequence[E], t: int) -> E:
    """The last event at or before t; the first event when t precedes them all."""
    # Histories are short (a handful of events): a backward scan beats bisect with a key function.
    for k in range(len(events) - 1, 0, -1):
        if events[k][0] <= t:
            return events[k]
    return events[0]


def time_of(events: Sequence[tuple[Any, ...]], state: Any, t: int) -> int | None:
    """When `state` was first entered, if that happened at or before t."""
    for when, s in events:
        if when > t:
            return None
        if s == state:
            return when
    return None
