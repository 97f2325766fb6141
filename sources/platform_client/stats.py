"""Thread-safe request counters per operation (`PlatformClient.stats`)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True, slots=True)
class OperationStats:
    """Counts for one operation. `requests` counts every HTTP try; `errors` the calls that raised."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0  # 429 answers
    foreign_rate_limited: int = 0  # of them, 429s our pace could not have caused (another client's)
    errors: int = 0
    rate_limit_wait_seconds: float = 0.0  # waited for the proactive limiter (and Retry-After blocks)
    backoff_seconds: float = 0.0  # slept between tries
    answers: int = 0  # tries that got an HTTP answer (any status)
    answer_seconds: float = 0.0  # their time from sending to the answer: the latency


class StatsBook:
    """Accumulates `OperationStats` by operation name from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_operation: dict[str, OperationStats] = {}

    def add(self, operation: str, **deltas: float) -> None:
        """Add `deltas` (field name → amount) to the counts of `operation`."""
        with self._lock:
            current = self._by_operation.get(operation, OperationStats())
            changes = {name: getattr(current, name) + value for name, value in deltas.items()}
            self._by_operation[operation] = replace(current, **changes)

    def snapshot(self) -> dict[str, OperationStats]:
        """A copy of the counts, consistent at one instant."""
        with self._lock:
            return dict(self._by_operation)


def total_stats(stats: Mapping[str, OperationStats]) -> OperationStats:
    """The sum over operations of a `PlatformClient.stats` snapshot."""
    totals = {f.name: sum(getattr(s, f.name) for s in stats.values()) for f in fields(OperationStats)}
    return OperationStats(**totals)
