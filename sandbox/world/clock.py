"""Time in the world: integer milliseconds since the epoch, formatted the way the API writes them."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from functools import lru_cache

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

# The initial clock and the start of history (docs/contracts.md part 2).
T0 = 1780272000000  # 2026-06-01T00:00:00Z
H0 = 1717200000000  # 2024-06-01T00:00:00Z
SPAN = T0 - H0
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@lru_cache(maxsize=16384)
def _day(day: int) -> str:
    t = time.gmtime(day * 86400)
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"


# Zero-padded fields by table lookup: cheaper than format specs in the hottest function of the world.
_TWO = [f"{n:02d}" for n in range(60)]
_THREE = [f"{n:03d}" for n in range(1000)]


def iso(ms: int) -> str:
    """ISO 8601 UTC with milliseconds and `Z` (the day part is cached: most records share days)."""
    d, r = divmod(ms, DAY)
    s, f = divmod(r, SECOND)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    two = _TWO
    return f"{_day(d)}T{two[h]}:{two[m]}:{two[s]}.{_THREE[f]}Z"


def iso_date(ms: int) -> str:
    """Date only (`YYYY-MM-DD`), as some transfer dates are written."""
    return _day(ms // DAY)


def iso_naive(ms: int) -> str:
    """`YYYY-MM-DD HH:MM:SS` without a zone, as some attendee invoice dates are written."""
    d, r = divmod(ms, DAY)
    h, r = divmod(r, HOUR)
    m, r = divmod(r, MINUTE)
    return f"{_day(d)} {h:02d}:{m:02d}:{r // SECOND:02d}"


def to_ms(value: datetime) -> int:
    """An aware datetime (a naive one is taken as UTC) to epoch milliseconds."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - EPOCH) // timedelta(milliseconds=1)


def to_datetime(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)
