"""Ids that do not exist retire: an id the API answers 404 for in `retire_after_not_found` runs stops costing
requests.

Applies to the ids we ask for one by one: sale ids (discovered, or configured in `sale_ids`), `event_ids`,
the `schools`' student slugs and delivery ids. Each run that gets a 404 for an id counts once, whatever
the number of resources that asked; a successful answer forgets the count. The counts and the retired
ids live in the source state (`NOT_FOUND_KEY`, `RETIRED_KEY`), which dlt commits with the run's rows;
`_platform_retired_ids` is written from it after each sync (`retired_rows`). `sync --full-refresh`
drops the state and with it every retirement.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import dlt

# Source state: kind -> id -> [runs that got a 404, first such run's start, last such run's start]
NOT_FOUND_KEY = "not_found"
# Source state: kind -> id -> [first 404 run's start, retiring run's start, runs with a 404, reason]
RETIRED_KEY = "retired"
RETIRED_TABLE = "_platform_retired_ids"
RETIRED_COLUMNS: dict[str, Any] = {
    "kind": {"data_type": "text", "nullable": False, "primary_key": True},
    "id": {"data_type": "text", "nullable": False, "primary_key": True},
    "first_not_found_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "retired_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "confirmations": {"data_type": "bigint", "nullable": False},
    "reason": {"data_type": "text", "nullable": True},
}

Kind = Literal["sale", "event", "student", "delivery"]


@dataclass
class Retirements:
    """The run's view of the retired ids and its 404s (thread-safe: resources run in parallel)."""

    after: int  # runs with a 404 that retire an id (`retire_after_not_found`)
    run_at: datetime  # this run's start: a run counts once per id
    # The run's stamp (`runclock.RunClock.stamp`), which then stands for `run_at`: read at the first 404,
    # once the API's clock is known, so that the table's times are on the clock of the run records.
    stamp: Callable[[], datetime] | None = None
    retired_now: list[tuple[str, str]] = field(default_factory=list)  # (kind, id) retired by this run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def is_retired(self, kind: Kind, item: Any) -> bool:
        with self._lock:
            return str(item) in _state(RETIRED_KEY).get(kind, {})

    def not_found(self, kind: Kind, item: Any, reason: str) -> bool:
        """Count this run's 404 for `item`; True when it retires the id now."""
        key, run = str(item), (self.run_at if self.stamp is None else self.stamp()).isoformat()
        with self._lock:
            counts = _state(NOT_FOUND_KEY).setdefault(kind, {})
            count, first, last = counts.get(key) or [0, run, ""]
            if last != run:
                count += 1
            if count < self.after:
                counts[key] = [count, first, run]
                return False
            counts.pop(key, None)
            _state(RETIRED_KEY).setdefault(kind, {})[key] = [first, run, count, reason]
            self.retired_now.append((kind, key))
            return True

    def found(self, kind: Kind, item: Any) -> None:
        """The API knows `item`: a count of earlier 404s is forgotten."""
        with self._lock:
            counts = _state(NOT_FOUND_KEY).get(kind)
            if counts:
                counts.pop(str(item), None)


def _state(key: str) -> dict[str, dict[str, list[Any]]]:
    value: dict[str, dict[str, list[Any]]] = dlt.current.source_state().setdefault(key, {})
    return value


def retired_ids(source_state: Mapping[str, Any], kind: Kind) -> set[str]:
    """The retired ids of one kind in a committed source state (`pipeline.state`'s `sources.platform`)."""
    return set(source_state.get(RETIRED_KEY, {}).get(kind, {}))


def retired_rows(source_state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of `_platform_retired_ids` from a committed source state."""
    rows = []
    for kind, ids in sorted(source_state.get(RETIRED_KEY, {}).items()):
        for item, (first, retired_at, confirmations, reason) in sorted(ids.items()):
            rows.append(
                {
                    "kind": kind,
                    "id": item,
                    "first_not_found_at": datetime.fromisoformat(first),
                    "retired_at": datetime.fromisoformat(retired_at),
                    "confirmations": int(confirmations),
                    "reason": reason,
                }
            )
    return rows
