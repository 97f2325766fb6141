"""What the sandbox's two apps share (`SandboxState`): the world, the options it was started with, the
token store, the rate limiter, the faults, drift, webhooks and the counts of answers (`Stats`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from sandbox.auth import AuthStore
from sandbox.drift import DriftInjector
from sandbox.faults import FaultInjector
from sandbox.moving import MovingLists
from sandbox.ratelimit import RateLimiter
from sandbox.webhook_sender import WebhookSender
from sandbox.world.api import World


@dataclass(frozen=True)
class SandboxOptions:
    seed: int = 1
    scale: int = 1000
    time_scale: float = 1.0
    rate_limits: bool = True
    faults: str | None = None
    drift: float = 0.0  # share of the records of every read operation that depart from the spec
    drift_seed: int | None = None  # None: the world's seed


class Stats:
    """Answers per operation and status; `total` counts every API request, dropped ones too."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0
        self.operations: dict[str, dict[str, int]] = {}
        self.faults: dict[str, int] = {}
        # Requests in flight over time, measured while `latency_ms` is on: seconds with at least one in
        # flight, and the sum of every request's time in the server.
        self._in_flight = 0
        self._since = 0.0
        self.busy_seconds = 0.0
        self.request_seconds = 0.0
        # With `timeline=1`: per operation [first arrival, last answer, requests], seconds since the reset.
        self._reset_at = time.monotonic()
        self.timeline: dict[str, list[float]] = {}

    def arrived(self, operation: str, now: float) -> None:
        span = self.timeline.setdefault(operation, [now - self._reset_at, now - self._reset_at, 0])
        span[2] += 1

    def answered(self, operation: str, now: float) -> None:
        span = self.timeline.get(operation)
        if span is not None:
            span[1] = max(span[1], now - self._reset_at)

    def _advance(self, now: float) -> None:
        if self._in_flight:
            self.busy_seconds += now - self._since
            self.request_seconds += (now - self._since) * self._in_flight
        self._since = now

    def enter(self, now: float) -> None:
        self._advance(now)
        self._in_flight += 1

    def leave(self, now: float) -> None:
        self._advance(now)
        self._in_flight = max(0, self._in_flight - 1)

    def record(self, operation: str, status: int | str) -> None:
        self.total += 1
        per_status = self.operations.setdefault(operation, {})
        per_status[str(status)] = per_status.get(str(status), 0) + 1

    def record_fault(self, kind: str) -> None:
        self.faults[kind] = self.faults.get(kind, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        snapshot: dict[str, Any] = {"total": self.total, "operations": self.operations, "faults": self.faults}
        if self.request_seconds:
            busy, requests = self.busy_seconds, self.request_seconds
            snapshot["in_flight"] = {"busy_seconds": busy, "request_seconds": requests}
        if self.timeline:
            snapshot["timeline"] = {
                op: {"first": first, "last": last, "requests": int(n)}
                for op, (first, last, n) in self.timeline.items()
            }
        return snapshot


@dataclass
class SandboxState:
    world: World
    options: SandboxOptions
    auth: AuthStore
    limiter: RateLimiter
    faults: FaultInjector
    stats: Stats = field(default_factory=Stats)
    drift: DriftInjector = field(default_factory=DriftInjector)
    webhooks: WebhookSender = field(default_factory=WebhookSender)  # docs/contracts.md part 6
    moving: MovingLists = field(default_factory=MovingLists)  # the `reorder` fault
