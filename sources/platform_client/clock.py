"""Time as the client sees it, behind a protocol so tests can replace it with a fake clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Monotonic time for waiting and limiting, wall time for HTTP-date `Retry-After` values."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for `seconds` (no-op when not positive)."""
        ...

    def now(self) -> datetime:
        """The current wall time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(UTC)
