"""The drift injector: which records depart, how, and the report of every departure served.

Whether a record departs, and how, is a pure function of (drift seed, operation family, record
identity, rate): a 128-bit BLAKE2b digest of the first three gives a uniform draw `u` (the record
departs when `u < rate`, so a record departing at 1% also departs at 5%) and the seed of the choices
(one to three sites, the kind first, then the values), which do not depend on the rate.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from sandbox.drift.operations import TARGETS, Target
from sandbox.drift.sites import Departure, apply, choose, new_fields, sites

MAX_DEPARTURES = 3


@dataclass(frozen=True)
class DriftSettings:
    rate: float = 0.0
    seed: int = 1
    rates: Mapping[str, float] = field(default_factory=dict)  # per-operation overrides of `rate`

    def __post_init__(self) -> None:
        for name, value in [("rate", self.rate), *self.rates.items()]:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"drift rate of {name} must be between 0 and 1")
        unknown = sorted(set(self.rates) - set(TARGETS))
        if unknown:
            raise ValueError(f"no drift for these operations: {', '.join(unknown)}")

    @property
    def active(self) -> bool:
        return self.rate > 0 or any(value > 0 for value in self.rates.values())

    def rate_of(self, operation: str) -> float:
        return self.rates.get(operation, self.rate)

    def as_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "seed": self.seed, "rates": dict(self.rates)}


def _digest(seed: int, family: str, record_id: str) -> bytes:
    return hashlib.blake2b(f"{seed}\x1f{family}\x1f{record_id}".encode(), digest_size=16).digest()


def _draw(digest: bytes) -> float:
    """The record's uniform draw in [0, 1): it departs when this is below the rate."""
    return int.from_bytes(digest[:8]) / 2**64


def _choices(digest: bytes) -> random.Random:
    # Seeding a Random costs more than the digest: only departing records pay for it.
    return random.Random(int.from_bytes(digest[8:]))


def depart(
    record: dict[str, Any], target: Target, seed: int, record_id: str
) -> tuple[dict[str, Any], list[Departure]]:
    """A departed copy of `record` and what departs in it (the same every time for the same inputs)."""
    rng = _choices(_digest(seed, target.family, record_id))
    count = 1 + rng.randrange(MAX_DEPARTURES)
    added = new_fields(target.schema, target.family, seed)
    chosen = choose(sites(record, target.schema, target.rules, added), count, rng)
    # A JSON round trip is a deep copy faster than copy.deepcopy (bench/README.md), and what is sent anyway.
    departed = orjson.loads(orjson.dumps(record))
    return departed, [apply(departed, site, target.rules, rng) for site in chosen]


class DriftInjector:
    """Applies the current settings to answers and remembers every departure served."""

    def __init__(self, settings: DriftSettings | None = None):
        self.settings = settings or DriftSettings()
        self._served: dict[bytes, dict[str, Any]] = {}

    @property
    def active(self) -> bool:
        return self.settings.active

    def apply(self, operation: str, payload: Any, path: Mapping[str, str]) -> Any:
        """The answer of `operation` as sent with drift: departing records replaced by departed copies.

        The world's records are never changed (some are cached): a departing record is copied, and so is
        the list or envelope that holds it.
        """
        target = TARGETS.get(operation)
        rate = self.settings.rate_of(operation)
        if target is None or rate <= 0:
            return payload
        if target.layout == "record" and isinstance(payload, dict):
            return self._record(operation, target, rate, payload, path)
        if target.layout == "array" and isinstance(payload, list):
            return self._records(operation, target, rate, payload, path)
        if target.layout == "items" and isinstance(payload, dict) and isinstance(payload.get("items"), list):
            return {**payload, "items": self._records(operation, target, rate, payload["items"], path)}
        return payload

    def _records(
        self, operation: str, target: Target, rate: float, records: list[Any], path: Mapping[str, str]
    ) -> list[Any]:
        return [self._record(operation, target, rate, r, path) if isinstance(r, dict) else r for r in records]

    def _record(
        self, operation: str, target: Target, rate: float, record: dict[str, Any], path: Mapping[str, str]
    ) -> dict[str, Any]:
        record_id = target.key(record, path)
        if record_id is None:  # not keyable: not ours to depart (a fake world's partial record)
            return record
        if _draw(_digest(self.settings.seed, target.family, record_id)) >= rate:
            return record
        departed, made = depart(record, target, self.settings.seed, record_id)
        for departure in made:
            self._remember(operation, record_id, departure)
        return departed

    def _remember(self, operation: str, record_id: str, departure: Departure) -> None:
        row = {
            "operation": operation,
            "record_id": record_id,
            "path": departure.path,
            "kind": departure.kind,
            "value": departure.value,
        }
        # JSON text as the key: 1 and True (or 1 and 1.0) are one dict key in Python, not in JSON.
        self._served.setdefault(orjson.dumps(row, option=orjson.OPT_SORT_KEYS), row)

    def departures(self) -> list[dict[str, Any]]:
        """Every departure in the records served since start or `reset`, one row each, sorted."""
        return [self._served[key] for key in sorted(self._served)]

    def reset(self) -> None:
        self._served.clear()

    def configure(self, settings: DriftSettings) -> None:
        self.settings = settings
