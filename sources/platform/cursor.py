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
are inclusive), skip the ids already loaded at exactly that instant, commit after the rows.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import datetime
from typing import Any

import pendulum


class Cursor:
    """The newest value of a timestamp field seen so far, and the ids stamped exactly with it.

    The API's lower bounds are inclusive, so the next run asks from the cursor itself: a record that
    changed at the very same instant is never missed. The ids already seen at that instant are skipped
    so an unchanged boundary record is not loaded again. The cursor is written back to the state only
    by `commit`, after the rows it covers were yielded: dlt stores the state in the same load package as
    those rows, so it never runs ahead of loaded data.
    """

    def __init__(self, state: MutableMapping[str, Any], key: str) -> None:
        self._state = state
        self._key = key
        saved = state.get(key) or {}
        self.value: datetime | None = _parse(saved.get("value"))
        self._boundary: set[str] = set(saved.get("ids") or ())
        self._newest = self.value
        self._newest_ids = set(self._boundary)

    def is_new(self, value: datetime | None, record_id: Any) -> bool:
        """False only for a record already loaded with exactly this cursor value."""
        return not (value is not None and value == self.value and str(record_id) in self._boundary)

    def observe(self, value: datetime | None, record_id: Any) -> None:
        if value is None:
            return
        if self._newest is None or value > self._newest:
            self._newest = value
            self._newest_ids = {str(record_id)}
        elif value == self._newest:
            self._newest_ids.add(str(record_id))

    def commit(self) -> None:
        if self._newest is None:
            return
        self._state[self._key] = {"value": self._newest.isoformat(), "ids": sorted(self._newest_ids)}


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = pendulum.parse(value)
    assert isinstance(parsed, datetime)
    return parsed
