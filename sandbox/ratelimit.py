"""Per-token, per-operation token buckets (spec part 8, contracts part 1).

Capacity equals the limit per window, so a fresh token may burst a full window's worth, then gets
one request per window/limit. `time_scale` shrinks the window (30/minute at scale 60 is 30/second)
so tests and demos meet the limits without waiting minutes. Time is the real monotonic clock, never
the world's clock: rate limits are about the client's pace, not the simulated business time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

WINDOW_SECONDS = 60.0
DEFAULT_LIMIT = 600
SPEC_LIMITS: Mapping[str, int] = {
    "sale_details": 30,
    "event_details": 30,
    "list_attendees": 30,
    "add_attendee": 30,
    "list_lesson_comments": 200,
}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    retry_after: int  # whole seconds, at least 1, meaningful only when not allowed

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(self.remaining)}
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class _Bucket:
    __slots__ = ("tokens", "updated")

    def __init__(self, tokens: float, updated: float):
        self.tokens = tokens
        self.updated = updated


class RateLimiter:
    """Decides whether one more request of (token, operation) may pass now."""

    def __init__(
        self,
        *,
        time_scale: float = 1.0,
        enabled: bool = True,
        limits: Mapping[str, int] | None = None,
        now: Callable[[], float] = time.monotonic,
    ):
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        self.time_scale = time_scale
        self.enabled = enabled
        self.limits = dict(SPEC_LIMITS if limits is None else limits)
        self._now = now
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def limit_of(self, operation: str) -> int:
        return self.limits.get(operation, DEFAULT_LIMIT)

    def check(self, token: str, operation: str) -> Decision:
        """Spend one request from the bucket if it has one; say when the next one will be there if not."""
        limit = self.limit_of(operation)
        rate = limit * self.time_scale / WINDOW_SECONDS  # requests refilled per second
        now = self._now()
        bucket = self._buckets.get((token, operation))
        if bucket is None:
            bucket = self._buckets[(token, operation)] = _Bucket(float(limit), now)
        else:
            bucket.tokens = min(float(limit), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return Decision(True, limit, int(bucket.tokens), 0)
        wait = (1.0 - bucket.tokens) / rate
        return Decision(False, limit, 0, max(1, math.ceil(wait)))

    def reset(self) -> None:
        self._buckets.clear()
