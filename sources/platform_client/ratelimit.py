"""Proactive, per-operation rate limiting shared by all threads of one client.

`OperationLimiter` is a sliding-window log: with a limit of L requests per window W it grants at most L
requests in any window of length W. It is work-conserving: L requests go at once, then each further request
goes exactly when the oldest of the last L grants leaves the window (plus a small margin, below), never
later. Grants are *reserved* under a lock and waited for outside it, so threads never wait on each other's
sleep and the grant times are fixed, in order, at the moment of asking.

An operation without a configured limit is unlimited until the server answers 429; the limiter then sets a
limit (the server's `X-RateLimit-Limit` if it is consistent with what was observed, else half the observed
rate) and halves it on each further 429. A `Retry-After` blocks every thread of the operation until it has
passed.

The pace recovers (additive increase, multiplicative decrease): after a cut, each answer that succeeds
adds one request per window, up to the operation's ceiling (its configured limit, or the first limit
derived for an unlimited one, never above the server's `X-RateLimit-Limit`). A 429 that our pacing cannot
have caused is not a reason to slow down: when the operation is paced at no more than the limit the server
states, the budget was spent by another client of the same account (another application of the user).
Such a 429 only holds the operation until its `Retry-After` and is counted apart (`Verdict.FOREIGN`); a
second 429 in a row, with no success between them, is taken as ours again (a server whose window is
longer than we think).
"""

from __future__ import annotations

import enum
import logging
import math
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from sources.platform_client.clock import Clock
from sources.platform_client.errors import ConfigurationError
from sources.platform_client.operations import DEFAULT_RATE_LIMITS, OPERATIONS_BY_NAME

logger = logging.getLogger("platform_sync.client")

BASE_WINDOW_SECONDS = 60.0

# Each window is lengthened by this fraction. A window measured at the client is exact only if every
# request reaches the server after the same latency; a burst answered faster than the one a window before
# it would otherwise land inside the server's window (or empty its token bucket: at L requests per window
# a bucket of capacity L is conformed to with zero slack by a sliding window of exactly W). 2% of the
# budget buys about a second of latency jitter per minute of window.
DEFAULT_WINDOW_MARGIN = 0.02


@dataclass(frozen=True, slots=True)
class Permit:
    """A granted request slot: when it was granted (clock time), how long the caller waited for it, and
    its place in the order of grants of its limiter."""

    granted_at: float
    waited: float
    sequence: int = 0


@dataclass(frozen=True, slots=True)
class Schedule:
    """What an operation's limiter grants, for a time-left estimate: requests a second at the limit it
    climbs back to after a cut (`per_second`), the most it grants at once (`burst`: its limit per window),
    and whether requests wait for it now (`waiting`: grants reserved for later, so the limiter, not the
    latency, sets the pace)."""

    per_second: float
    burst: int
    waiting: bool


class Verdict(enum.Enum):
    """What a 429 said about our pace."""

    OURS = "ours"  # we were at or above what the server allows: the limit was lowered
    FOREIGN = "foreign"  # we were within the server's limit: another client of the account spent it
    SAME_BURST = "same burst"  # a 429 of a burst already adapted to


class OperationLimiter:
    """At most `limit` grants in any window of `window` seconds (`limit=None`: unlimited until a 429)."""

    def __init__(
        self,
        name: str,
        limit: int | None,
        window: float,
        clock: Clock,
        *,
        margin: float = DEFAULT_WINDOW_MARGIN,
    ) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"{name}: a limit must be at least 1 request per window, got {limit}")
        if window <= 0:
            raise ValueError(f"{name}: the window must be positive, got {window}")
        self.name = name
        self.window = window
        self._span = window * (1.0 + margin)
        self._clock = clock
        self._lock = threading.Lock()
        self._limit = limit
        # The limit the pace climbs back to after a cut (None: unlimited, nothing to climb to).
        self._ceiling = limit
        self._rate_limited_in_a_row = 0  # 429s since the last success
        # Grant times, ascending. Limited: the last `limit` grants. Unlimited: the grants of the last
        # window, the observed rate to derive a limit from on the first 429.
        self._grants: deque[float] = deque()
        self._blocked_until = -math.inf
        self._issued = 0  # grants so far; a permit's `sequence`
        self._adapted_after = 0  # grants issued when the limit was last lowered

    @property
    def limit(self) -> int | None:
        """The current limit per window (None: unlimited)."""
        with self._lock:
            return self._limit

    def schedule(self) -> Schedule | None:
        """The limiter's schedule as a time-left estimate needs it (None: unlimited)."""
        with self._lock:
            limit = self._ceiling if self._ceiling is not None else self._limit
            if limit is None:
                return None
            waiting = bool(self._grants) and self._grants[-1] > self._clock.monotonic()
            return Schedule(limit / self._span, limit, waiting)

    def reserve(self) -> float:
        """Reserve the earliest allowed grant time (clock time, possibly in the future) and return it."""
        return self._reserve()[0]

    def _reserve(self) -> tuple[float, int]:
        with self._lock:
            now = self._clock.monotonic()
            at = max(now, self._blocked_until)
            if self._grants:
                at = max(at, self._grants[-1])  # keeps the log sorted when the limit or a block changed
            if self._limit is not None:
                if len(self._grants) >= self._limit:
                    at = max(at, self._grants[-self._limit] + self._span)
                self._grants.append(at)
                # Kept up to the ceiling, so that a limit raised again still sees the grants in its window.
                keep = max(self._limit, self._ceiling or 0)
                while len(self._grants) > keep:
                    self._grants.popleft()
            else:
                self._grants.append(at)
                while self._grants[0] <= at - self._span:
                    self._grants.popleft()
            self._issued += 1
            return at, self._issued

    def acquire(self) -> Permit:
        """Wait until a request may be sent; returns the permit (which `on_rate_limited` takes back)."""
        at, sequence = self._reserve()
        wait = at - self._clock.monotonic()
        if wait > 0:
            self._clock.sleep(wait)
        return Permit(granted_at=at, waited=max(wait, 0.0), sequence=sequence)

    @property
    def ceiling(self) -> int | None:
        """The limit the pace climbs back to after a 429 (None: unlimited)."""
        with self._lock:
            return self._ceiling

    def on_success(self, permit: Permit) -> None:
        """An answer that was not a 429: the pace climbs by one request per window toward the ceiling
        (only for requests granted after the last cut, which were paced by the lowered limit)."""
        with self._lock:
            self._rate_limited_in_a_row = 0
            if self._limit is None or self._ceiling is None or self._limit >= self._ceiling:
                return
            if permit.sequence <= self._adapted_after:
                return
            self._limit += 1
            if self._limit == self._ceiling:
                logger.info("%s: back to %d requests per %.3gs", self.name, self._limit, self.window)

    def on_rate_limited(
        self, permit: Permit, *, retry_after: float | None = None, server_limit: int | None = None
    ) -> Verdict:
        """Adapt to a 429 answered to the request of `permit`; say whose pace it was.

        `retry_after` (seconds) blocks all grants of the operation until then. The limit is lowered once
        per burst: 429s answering requests granted before the last adaptation are the same burst seen by
        other threads, and halving for each of them would collapse the rate for nothing.

        A 429 while the operation is paced at no more than the server's stated limit (`server_limit`,
        its `X-RateLimit-Limit`), the first since a success, is another client's: the limit stays. So is,
        on an unlimited operation, the first 429 since a success after fewer requests in the window than
        the server's stated limit; and any 429 after fewer than two requests in the window, which says
        nothing about our pace either: no limit is derived from them; `retry_after` still holds.
        """
        with self._lock:
            now = self._clock.monotonic()
            self._rate_limited_in_a_row += 1
            if retry_after is not None and retry_after > 0:
                self._blocked_until = max(self._blocked_until, now + retry_after)
            if server_limit is not None and server_limit >= 1 and self._ceiling is not None:
                self._ceiling = min(self._ceiling, server_limit)
            previous = self._limit
            if (
                previous is not None
                and server_limit is not None
                and previous <= server_limit
                and self._rate_limited_in_a_row == 1
            ):
                verdict = Verdict.FOREIGN
            elif permit.sequence <= self._adapted_after:
                return Verdict.SAME_BURST
            elif previous is None:
                observed = sum(1 for granted in self._grants if granted > now - self._span)
                verdict = Verdict.OURS
                if server_limit is not None and 1 <= server_limit <= observed:
                    new_limit = server_limit
                elif server_limit is not None and self._rate_limited_in_a_row == 1:
                    # Fewer sent in the window than the server says it allows: its budget was spent
                    # elsewhere. Halving our rate would only slow us (and for good: it sets the ceiling).
                    verdict = Verdict.FOREIGN
                elif observed >= 2:
                    new_limit = observed // 2
                else:
                    return Verdict.FOREIGN
                if verdict is Verdict.OURS:
                    self._ceiling = new_limit
            else:
                new_limit = max(1, previous // 2)
                if server_limit is not None and 1 <= server_limit < previous:
                    new_limit = server_limit  # the server says what it allows; no need to guess lower
                verdict = Verdict.OURS
            if verdict is Verdict.OURS:
                self._limit = new_limit
                self._adapted_after = self._issued
                keep = max(new_limit, self._ceiling or 0)
                while len(self._grants) > keep:
                    self._grants.popleft()
        if verdict is Verdict.FOREIGN:
            return self._foreign(server_limit, retry_after)
        logger.warning(
            "%s: rate limited by the server; limiting to %d requests per %.3gs (was %s), "
            "climbing back as answers succeed",
            self.name,
            new_limit,
            self.window,
            "unlimited" if previous is None else previous,
        )
        return verdict

    def _foreign(self, server_limit: int | None, retry_after: float | None) -> Verdict:
        logger.warning(
            "%s: 429 from another client of this account (we were within the server's limit of %s "
            "requests per %.3gs); waiting %s, pace unchanged",
            self.name,
            server_limit if server_limit is not None else "?",
            self.window,
            f"{retry_after:.3g}s as the server asks" if retry_after else "for the next try",
        )
        return Verdict.FOREIGN


def per_window(requests_per_minute: float, time_scale: float) -> tuple[int, float]:
    """(limit, window seconds) for a rate in requests per minute under a time scale.

    A whole rate keeps its burst (30/min → 30 per 60/scale s); a fractional one keeps its average with
    the largest whole burst below it (1.5/min → 1 per 40/scale s).
    """
    window = BASE_WINDOW_SECONDS / time_scale
    limit = max(1, math.floor(requests_per_minute))
    return limit, window * limit / requests_per_minute


def resolve_rate_limits(overrides: Mapping[str, float] | None) -> dict[str, float]:
    """The spec's limits (part 8) updated by `overrides`; unknown names and non-positive rates refused."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(OPERATIONS_BY_NAME))
    if unknown:
        raise ConfigurationError(
            f"rate_limits: unknown operation name(s) {', '.join(map(repr, unknown))}; "
            f"valid names: {', '.join(sorted(OPERATIONS_BY_NAME))}"
        )
    invalid = {
        name: rate
        for name, rate in overrides.items()
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0
    }
    if invalid:
        raise ConfigurationError(
            f"rate_limits: rates must be positive numbers of requests per minute, got {invalid}"
        )
    return {**DEFAULT_RATE_LIMITS, **{name: float(rate) for name, rate in overrides.items()}}


class RateLimiters:
    """One `OperationLimiter` per operation, created on first use, shared by all threads."""

    def __init__(
        self,
        rate_limits: Mapping[str, float] | None,
        time_scale: float,
        clock: Clock,
        *,
        margin: float = DEFAULT_WINDOW_MARGIN,
    ) -> None:
        if isinstance(time_scale, bool) or not isinstance(time_scale, int | float) or not time_scale > 0:
            raise ConfigurationError(f"rate_limit_time_scale must be a positive number, got {time_scale!r}")
        if not math.isfinite(time_scale):
            raise ConfigurationError(f"rate_limit_time_scale must be finite, got {time_scale!r}")
        self._rates = resolve_rate_limits(rate_limits)
        self._time_scale = float(time_scale)
        self._clock = clock
        self._margin = margin
        self._lock = threading.Lock()
        self._limiters: dict[str, OperationLimiter] = {}

    @property
    def time_scale(self) -> float:
        return self._time_scale

    @property
    def rates(self) -> Mapping[str, float]:
        """Configured requests per minute by operation (unscaled); operations absent are unlimited."""
        return dict(self._rates)

    def get(self, operation: str) -> OperationLimiter:
        """The limiter of `operation`."""
        with self._lock:
            limiter = self._limiters.get(operation)
            if limiter is None:
                rate = self._rates.get(operation)
                if rate is None:
                    limit, window = None, BASE_WINDOW_SECONDS / self._time_scale
                else:
                    limit, window = per_window(rate, self._time_scale)
                limiter = OperationLimiter(operation, limit, window, self._clock, margin=self._margin)
                self._limiters[operation] = limiter
            return limiter
