"""The API's clock as its answers tell it (the HTTP `Date` header), beside ours when each answer arrived.

A server's records are stamped by the server's clock, which may be ahead of or behind ours. What the
source needs of it is small: the server's time at the first answer of a run (from which the start of the
run by the server's clock follows) and its latest time (what "in the future" means for a record just
read). `Date` has a resolution of one second; an answer without one, or with one that does not parse,
tells nothing and is ignored.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime


@dataclass(frozen=True, slots=True)
class ServerReading:
    """One `Date` header: the server's time, and ours when the answer arrived (both aware, UTC)."""

    server: datetime
    ours: datetime

    @property
    def offset(self) -> timedelta:
        """How far the server's clock is ahead of ours (negative: behind)."""
        return self.server - self.ours


def parse_http_date(value: str | None) -> datetime | None:
    """An HTTP date (`Sun, 01 Jun 2026 00:00:00 GMT`) as an aware UTC datetime, or None."""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


class ServerTime:
    """The first and the latest readings of the server's clock. Thread-safe: one per client."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: ServerReading | None = None
        self._latest: ServerReading | None = None

    def observe(self, header: str | None, ours: datetime) -> None:
        """Note the `Date` header of an answer that arrived at `ours`."""
        server = parse_http_date(header)
        if server is None:
            return
        reading = ServerReading(server, _utc(ours))
        with self._lock:
            if self._first is None:
                self._first = reading
            if self._latest is None or reading.server >= self._latest.server:
                self._latest = reading

    @property
    def first(self) -> ServerReading | None:
        with self._lock:
            return self._first

    @property
    def latest(self) -> ServerReading | None:
        with self._lock:
            return self._latest

    def at(self, ours: datetime) -> datetime | None:
        """The server's time at the moment `ours` of our clock, by the first reading; None before any."""
        first = self.first
        return None if first is None else _utc(ours) + first.offset


def _utc(moment: datetime) -> datetime:
    """A plain aware UTC datetime (a pendulum one loses its zone in `astimezone` arithmetic)."""
    return datetime.fromtimestamp(moment.timestamp(), UTC)
