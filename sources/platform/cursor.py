"""An incremental cursor kept in dlt resource state: committed only with the rows it covers.

Why not `dlt.sources.incremental`, which does most of this: the three incremental resources need what it
does not give.
- A row whose cursor field departs from the spec (a null, a date without a time, a number as a string)
  must load, and must not move the cursor: its value may be before or after the instant the API filtered
  on (`records.new_rows`). dlt's incremental compares every row's value, and can only drop or include
  a row with a missing value, not one with a value of another type.
- `event_attendees` keeps one cursor per configured event inside one resource; dlt's is one per resource.
- `fiscal_documents` walks several date windows at once (`fastpath/interleave.py`) and re-reads a lag
  before its cursor each run; its rows may arrive as Arrow tables packed by a helper, with the rows whose
  cursor departed set apart. The cursor must see only the others, and move once after the last window.
The rule is the same for all three and kept here once: ask from the newest value seen (the API's bounds
are inclusive) less a lookback (`cursor_lookback_minutes`: a record that became visible late is still
read; the merge keeps one row of what is read twice), skip the ids already loaded at exactly that
instant, commit after the rows. A value later than the start of the run by the API's clock or ours
(`runclock.RunClock.cursor_bound`) never moves the cursor: a record stamped by a clock ahead of the
other's would otherwise hide every change made before its time from every later run. One that is in
the future is also reported (`on_future`).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pendulum

if TYPE_CHECKING:
    from sources.platform.runclock import RunClock

# Called with a record's id and its cursor value when that value is in the future.
FutureHandler = Callable[[Any, datetime], None]


class Cursor:
    """The newest value of a timestamp field seen so far, and the records seen shortly before it.

    The API's lower bounds are inclusive, so the next run asks from the cursor itself, less `lookback`:
    a record that changed at the very same instant, or became visible late, is never missed. The records
    already loaded with the value they come with again (the ids at the cursor's instant, and those of
    the lookback before it) are skipped, so an unchanged record is not loaded again. The cursor is
    written back to the state only by `commit`, after the rows it covers were yielded: dlt stores the
    state in the same load package as those rows, so it never runs ahead of loaded data.
    """

    def __init__(
        self,
        state: MutableMapping[str, Any],
        key: str,
        clock: RunClock | None = None,
        on_future: FutureHandler | None = None,
        lookback: timedelta = timedelta(0),
    ) -> None:
        self._state = state
        self._key = key
        self._clock = clock
        self._on_future = on_future
        self.lookback = lookback
        saved = state.get(key) or {}
        self.value: datetime | None = _parse(saved.get("value"))
        self._boundary: set[str] = set(saved.get("ids") or ())
        self._earlier: dict[str, str] = dict(saved.get("earlier") or {})
        self._newest = self.value
        self._newest_ids = set(self._boundary)
        # Every record seen within `lookback` of the newest value (the loaded ones from the state first).
        self._recent: dict[str, datetime] = {i: v for i, t in self._earlier.items() if (v := _parse(t))}
        if self.value is not None:
            self._recent.update(dict.fromkeys(self._boundary, self.value))
        self._prune_at = 2 * len(self._recent) + 1024

    def is_new(self, value: datetime | None, record_id: Any) -> bool:
        """False only for a record already loaded with exactly this cursor value."""
        if value is None:
            return True
        ident = str(record_id)
        if value == self.value and ident in self._boundary:
            return False
        earlier = self._earlier.get(ident)
        return earlier is None or _parse(earlier) != value

    def bound(self) -> datetime | None:
        """The latest value this cursor may take in this run, if it is bounded."""
        return None if self._clock is None else self._clock.cursor_bound()

    def since(self) -> datetime | None:
        """Where the next read starts: `lookback` before the cursor (None before the first commit)."""
        return None if self.value is None else self.value - self.lookback

    def observe(self, value: datetime | None, record_id: Any) -> None:
        if value is None:
            return
        if self._clock is not None and (aware := _aware(value)) > self._clock.cursor_bound():
            if self._on_future is not None and self._clock.is_future(aware):
                self._on_future(record_id, aware)
            return
        ident = str(record_id)
        if self._newest is None or value > self._newest:
            self._newest = value
            self._newest_ids = {ident}
        elif value == self._newest:
            self._newest_ids.add(ident)
        if self.lookback:
            self._recent[ident] = value
            if len(self._recent) > self._prune_at:
                self._recent = self._within_lookback()
                self._prune_at = 2 * len(self._recent) + 1024

    def commit(self) -> None:
        if self._newest is None:
            return
        saved: dict[str, Any] = {"value": self._newest.isoformat(), "ids": sorted(self._newest_ids)}
        earlier = {
            ident: value.isoformat()
            for ident, value in sorted(self._within_lookback().items())
            if value < self._newest
        }
        if earlier:
            saved["earlier"] = earlier
        self._state[self._key] = saved

    def _within_lookback(self) -> dict[str, datetime]:
        if self._newest is None or not self.lookback:
            return {}
        start = self._newest - self.lookback
        return {ident: value for ident, value in self._recent.items() if value >= start}


def _aware(value: datetime) -> datetime:
    """A record's time as an aware datetime: a naive one is UTC (contracts part 1)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = pendulum.parse(value)
    assert isinstance(parsed, datetime)
    return parsed
