"""How many requests of one operation go at once: one rule and one gate per operation, shared by every
reader that uses it (issue 45).

**The rule** (`OperationFlow.wanted`): the pace the operation's rate limiter grants at its ceiling times
the latency its answers take (a moving average, `LATENCY_WEIGHT` to the newest answer), and half again as
headroom (in flight ~ rate x latency), at least the caller's least and at most its most; the least while
nothing is measured. An operation without a known limit (the spec states five) is probed: the least, then
one more with each answer, up to the most (a 429 then gives the limiter a limit). Within that, a
congestion window: it grows by one with each answer that is not a sign of congestion and halves (never
below one) on one that is, a 5xx, a timeout or a connection that failed, or a 429 our own pace caused
(another app's 429 says nothing about our concurrency: the rate limiter waits it out). Requests sleeping
before a retry are not in flight: each adds one to what the readers may send (a request that backs off
gives its slot back).

**The gate** (`OperationFlow.slot`): every try of an operation holds one of its slots from before it asks
the rate limiter for its turn until its answer. However many readers send requests of one operation (a
list and the index of a fan over it, the windows of one list, two resources), together they have no more
in flight than the rule allows with the largest least and most any of them asked for.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sources.platform_client.ratelimit import Schedule

# Requests kept in flight per operation: rate x latency and half again, so that an answer slower than the
# mean does not leave a grant of the limiter unused.
IN_FLIGHT_HEADROOM = 1.5
# Weight of the newest answer in the latency's moving average: about the last ten answers count.
LATENCY_WEIGHT = 0.2
# How long a request waiting at the gate sleeps before it looks again (the window may have grown without
# a slot being given back, e.g. when a reader asks for a larger least).
GATE_RECHECK_SECONDS = 0.25


class OperationFlow:
    """One operation's concurrency: the rule, its congestion window, its gate and its sleepers."""

    def __init__(self, least: int, most: int) -> None:
        self._changed = threading.Condition()
        self.least = max(1, least)  # the gate's bounds: the largest any reader asked for
        self.most = max(self.least, most)
        self.latency: float | None = None  # seconds, moving average of the answers' times
        self.window: int | None = None  # the congestion window; None: no cut, or grown back (the rule alone)
        self.active = 0  # tries holding a slot
        self.backing_off = 0  # requests sleeping before a retry
        self.grown = 0  # answers that were no sign of congestion, up to `most` (an unlimited operation)
        # cut since the last answer that was no sign of congestion: the failures of one flight (a burst
        # of 503s answering requests sent together) cut the window once, not once each
        self._cut_pending = False

    def wanted(self, schedule: Schedule | None, least: int, most: int) -> int:
        """How many requests of the operation the reader (with its `least` and `most`) may keep in
        flight: the rule within the congestion window, plus the requests sleeping before a retry."""
        with self._changed:
            self.least = max(self.least, least)
            self.most = max(self.most, most)
            return min(most, self._limit(schedule, least, most) + self.backing_off)

    def _limit(self, schedule: Schedule | None, least: int, most: int) -> int:
        if schedule is None:  # no limit known: probed, from the least up by one with each answer
            target = least + self.grown
        elif self.latency is None:
            target = least
        else:
            target = math.ceil(schedule.per_second * self.latency * IN_FLIGHT_HEADROOM)
        target = max(1, least, min(most, target))
        return target if self.window is None else max(1, min(target, self.window))

    @contextmanager
    def slot(self, schedule: Schedule | None) -> Iterator[None]:
        """Hold one of the operation's slots (waiting while the rule's limit is reached) for one try."""
        with self._changed:
            while self.active >= self._limit(schedule, self.least, self.most):
                self._changed.wait(GATE_RECHECK_SECONDS)
            self.active += 1
        try:
            yield
        finally:
            with self._changed:
                self.active -= 1
                self._changed.notify()

    def answered(self, seconds: float, congested: bool) -> None:
        """An answer came after `seconds`: it moves the latency's average; a sign of congestion (5xx, a
        429 we caused) halves the window, any other answer widens it by one."""
        with self._changed:
            self.latency = (
                seconds if self.latency is None else self.latency + LATENCY_WEIGHT * (seconds - self.latency)
            )
            if congested:
                self._cut()
                return
            self._cut_pending = False
            if self.grown < self.most:
                self.grown += 1
                self._changed.notify_all()
            if self.window is not None:
                self.window += 1
                if self.window >= self.most:
                    self.window = None  # grown back: the rule alone
                self._changed.notify_all()

    def failed_to_answer(self) -> None:
        """No answer (a timeout, a refused or broken connection): a sign of congestion."""
        with self._changed:
            self._cut()

    def _cut(self) -> None:
        if self._cut_pending:
            return
        self._cut_pending = True
        current = min(self.most, max(1, self.active), self.most if self.window is None else self.window)
        self.window = max(1, current // 2)

    @contextmanager
    def sleeping(self) -> Iterator[None]:
        """A request sleeping before its retry: its slot is free meanwhile."""
        with self._changed:
            self.backing_off += 1
        try:
            yield
        finally:
            with self._changed:
                self.backing_off -= 1


class Flows:
    """The `OperationFlow` of each operation of one client, made on first use."""

    def __init__(self, least: int, most: int) -> None:
        self._least, self._most = least, most
        self._lock = threading.Lock()
        self._flows: dict[str, OperationFlow] = {}

    def get(self, operation: str) -> OperationFlow:
        with self._lock:
            flow = self._flows.get(operation)
            if flow is None:
                flow = self._flows[operation] = OperationFlow(self._least, self._most)
            return flow
