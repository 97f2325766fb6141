"""The one retry policy: what is retried, how long to wait, and when to give up.

Retried: 429, 500, 502, 503, 504, timeouts, connection errors and drops, and success answers whose body is
not the JSON expected (truncated bodies happen). Not retried: every other status (a 4xx will not change
by asking again). A request that is not idempotent (a POST) is retried only when the server certainly did
not act on it: a 429, or a connection that was never established. After a drop, a timeout or a 5xx the
POST may have been applied, and repeating it could create a second cart or attendee.

Delays: the server's `Retry-After` (seconds or an HTTP date) when it sends one, capped at
`max_retry_after` (one beyond the client's patience defers the operation instead: `client.py`);
otherwise exponential backoff with full jitter, `uniform(0, min(cap, base * 2**n))`, which
spreads the retries of many threads instead of synchronising them.
"""

from __future__ import annotations

import enum
import random
import threading
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

from sources.platform_client.errors import ConfigurationError

RETRYABLE_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})
# The longest `Retry-After` a run waits for; a longer one defers its operation to the next run
# (`errors.OperationDeferredError`).
DEFAULT_PATIENCE = 300.0


class FailureKind(enum.Enum):
    """How an attempt failed."""

    STATUS = "status"  # an HTTP answer with an error status
    CONNECT = "connect"  # no connection was made: the request never reached the server
    TIMEOUT = "timeout"  # the request was sent (or partly), no answer in time
    DROPPED = "dropped"  # the connection broke while sending or reading
    MALFORMED = "malformed"  # a success status whose body is not the JSON expected
    INVALID = "invalid"  # httpx could not send the request as built (bad URL, protocol error)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt, as the policy needs to see it."""

    kind: FailureKind
    status: int | None = None
    retry_after: str | None = None  # the raw header value


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a `Retry-After` value (delta-seconds or HTTP date); None if absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is always GMT; a zoneless one is read as such
            when = when.replace(tzinfo=now.tzinfo)
        return max(0.0, (when - now).total_seconds())
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(0.0, seconds)


class RetryPolicy:
    """Decides whether and when to try again. Thread-safe.

    `max_attempts` counts every try, the first included (config `max_retries`, "tries per request").
    """

    def __init__(
        self,
        max_attempts: int = 6,
        *,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        max_retry_after: float = 300.0,
        rng: random.Random | None = None,
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigurationError(
                f"max_retries (tries per request) must be an integer of at least 1, got {max_attempts!r}"
            )
        if backoff_base < 0 or backoff_cap < 0 or max_retry_after < 0:
            raise ConfigurationError("backoff_base, backoff_cap and max_retry_after must not be negative")
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_retry_after = max_retry_after
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()  # random.Random is not documented as thread-safe

    def is_retryable(self, failure: Failure, *, idempotent: bool) -> bool:
        """Whether this kind of failure may be tried again at all (ignoring the attempt budget)."""
        if failure.kind is FailureKind.INVALID:
            return False
        if failure.kind is FailureKind.CONNECT:
            return True
        if failure.kind is FailureKind.STATUS:
            if failure.status == 429:
                return True  # refused before any processing
            return idempotent and failure.status in RETRYABLE_STATUSES
        return idempotent

    def should_retry(self, failure: Failure, attempt: int, *, idempotent: bool) -> bool:
        """Whether to try again after `attempt` (1-based) failed."""
        return attempt < self.max_attempts and self.is_retryable(failure, idempotent=idempotent)

    def server_delay(self, failure: Failure, now: datetime) -> float | None:
        """The server's `Retry-After`, capped at `max_retry_after`; None if it sent none."""
        seconds = parse_retry_after(failure.retry_after, now)
        return None if seconds is None else min(seconds, self.max_retry_after)

    def backoff(self, attempt: int) -> float:
        """Full-jitter exponential backoff after failed `attempt` (1-based)."""
        ceiling = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
        with self._rng_lock:
            return self._rng.uniform(0.0, ceiling)

    def delay(self, failure: Failure, attempt: int, now: datetime) -> float:
        """Seconds to wait before the next try."""
        server = self.server_delay(failure, now)
        return server if server is not None else self.backoff(attempt)
