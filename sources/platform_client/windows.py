"""Date windows for the operations that filter by a date range."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta


def date_windows(start: datetime, end: datetime, days: int) -> Iterator[tuple[datetime, datetime]]:
    """Consecutive inclusive windows of at most `days` covering [start, end].

    Windows share their boundary instant: the API's bounds are inclusive, so a record stamped exactly
    on a boundary is read twice, which the merge on the primary key absorbs; none is ever skipped.
    """
    width = timedelta(days=days)
    lower = start
    while lower < end:
        upper = min(lower + width, end)
        yield lower, upper
        lower = upper
    if start >= end:
        yield start, end


def iso_z(moment: datetime) -> str:
    """The API's timestamp form: ISO 8601 in UTC with milliseconds and a `Z`."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
