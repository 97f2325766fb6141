"""The times of one run by both clocks: ours, and the API's as its answers tell it (`ServerTime`).

Three questions are answered here once for the whole source:
- how far a cursor may move (`cursor_bound`): never past the start of the run by the API's clock or by
  ours, whichever is earlier, so a record stamped by a clock ahead of the other's is read again;
- whether a record's time is in the future (`is_future`): later than the API's latest answer plus the
  tolerance; such a record loads, is reported, and never moves a cursor;
- which time stamps what the run writes (`stamp`): ours, unless the API's differs by more than the
  tolerance, in which case the API's (its records are stamped by its clock; ours may be wrong). One
  value for the whole run: the community snapshots, the run records (`_platform_sync_runs`), the
  freshness table's read times and the companion tables' `checked_at` (`now`) are all on that clock, so
  a run made while our clock was a year ahead never wins "latest run" once our clock is fixed. The
  stamp is always later than the stamp of the run before (`floor`, kept in the source state), so runs
  keep their order by it even against a clock that stands still or steps back between runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pendulum

from sources.platform_client.servertime import ServerTime

# The source state's table of each resource's last run stamp (`SourceContext.finished`), written by every
# run that reads it, whether the read succeeded or not: the floor of the next run's stamp.
RUN_STAMPS_KEY = "last_run_stamp"


@dataclass(frozen=True)
class RunClock:
    """`started_at`: the start of the run by our clock; `server`: the client's readings of the API's."""

    started_at: datetime
    server: ServerTime
    tolerance: timedelta
    floor: datetime | None = None  # the latest stamp an earlier run kept in the source state
    # [the stamp, our time when it was fixed], empty until the first `stamp()`
    _stamp: list[datetime] = field(default_factory=list, repr=False, compare=False)
    _stamp_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def server_start(self) -> datetime | None:
        """The start of the run by the API's clock: the `Date` of its first answer in the run (taken as
        it is: corrected by our clock's elapsed time, it would move with a clock the API's is not)."""
        first = self.server.first
        return None if first is None else first.server

    def cursor_bound(self) -> datetime:
        """The latest value a cursor may take in this run."""
        server_start = self.server_start()
        started_at = datetime.fromtimestamp(self.started_at.timestamp(), UTC)
        return started_at if server_start is None else min(started_at, server_start)

    def is_future(self, value: datetime) -> bool:
        """Later than the API's latest `Date` (our clock, before any answer) plus the tolerance."""
        latest = self.server.latest
        now = latest.server if latest is not None else pendulum.now("UTC")
        return value > now + self.tolerance

    def skew(self) -> timedelta | None:
        """How far the API's clock is ahead of ours (negative: behind), once an answer told it."""
        first = self.server.first
        return None if first is None else first.offset

    def disagrees(self) -> bool:
        skew = self.skew()
        return skew is not None and abs(skew) > self.tolerance

    def stamp(self) -> datetime:
        """The time the run's snapshots and records are stamped with (module docstring): ours, or when
        the clocks disagree the API's: its first `Date` of the run plus the time our clock measured
        since, fixed at the first call (one value for the whole run). Never at or before `floor`: a
        server whose clock stands still (a paused sandbox) or steps back still gives each run a later
        stamp than the one before, one microsecond after it at least."""
        with self._stamp_lock:
            if not self._stamp:
                first = self.server.first
                if first is not None and self.disagrees():
                    stamp = first.server + (datetime.now(UTC) - first.ours)
                else:
                    stamp = datetime.fromtimestamp(self.started_at.timestamp(), UTC)
                if self.floor is not None and stamp <= self.floor:
                    stamp = self.floor + timedelta(microseconds=1)
                self._stamp.extend((stamp, datetime.now(UTC)))  # the stamp, when it was fixed by ours
            return self._stamp[0]

    def skew_seconds(self) -> float | None:
        """`skew` in seconds (the API's clock minus ours), None until an answer told it."""
        skew = self.skew()
        return None if skew is None else skew.total_seconds()

    def now(self) -> datetime:
        """Now on the clock the run's stamp is on: the stamp plus the time our clock measured since it was
        fixed (so `now() >= stamp()` within a run, on either clock, floored or not)."""
        stamp = self.stamp()
        moved = stamp + (datetime.now(UTC) - self._stamp[1])
        if self.disagrees():
            return moved
        return max(moved, datetime.now(UTC))

    def skew_line(self) -> str | None:
        """The summary's line about the two clocks, when they disagree beyond the tolerance."""
        skew = self.skew()
        if skew is None or not self.disagrees():
            return None
        side = "ahead of" if skew > timedelta(0) else "behind"
        return (
            f"clock: the API's clock is {_span(abs(skew))} {side} ours (tolerance "
            f"{int(self.tolerance.total_seconds())} s); the run's records, freshness and community "
            "snapshots are stamped with the API's time"
        )


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds} s"


def latest_stamp(source_state: Mapping[str, Any], keys: Iterable[str]) -> datetime | None:
    """The latest time in the source state's ISO time tables `keys` (resource -> time), if any."""
    times = [
        datetime.fromisoformat(value).astimezone(UTC)
        for key in keys
        for value in (source_state.get(key) or {}).values()
        if value
    ]
    return max(times, default=None)
