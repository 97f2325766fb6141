"""Seeded, reproducible faults on API operations (contracts part 2).

Spec: comma-separated `key=value` from `error`, `slow`, `drop`, `truncate` (shares in [0, 1]),
`slow_seconds`, `revoke_after` (N: the token used for the Nth API request is revoked and that request
already answers 401) and `seed`. Every API request draws the same three random numbers whatever
happens to it, so the same spec and the same request sequence give the same faults.

Two faults name what they hit instead of drawing it (they draw nothing, so adding them changes no other
fault): `poison=KIND@ID+KIND@ID...` makes the record with that id (its `id`, or `document.id`) unreadable
in every answer that carries it (`POISON_KINDS`), `malformed=OPERATION+...` answers every request of
those operations 200 with a body that is not JSON, and `loose_envelope=OPERATION+...` writes those paged
lists' envelopes as a server we did not write might (`loosen_envelope`): numbers as text, a `nextPage`
link, `pages` and `totalItems` left out of every even page, and one page more announced than there is
(its answer is empty). `stall=OPERATION+...` answers every request of those operations 429 with
`Retry-After: 3600` (`STALL_SECONDS`), as an API that closed an operation for an hour.
`newest_first=OPERATION+...` serves those paged lists in the reverse of the world's order (the newest
record first, as many APIs list comments; `sandbox/moving.py`), the moves of `reorder` aside.
Opt-in behaviours of a remote, shared, changing API (issue 27 and 26), off unless named:
`latency_ms` (every API answer waits that long, as across the internet; with `latency_max_ms` above it,
a time drawn uniformly between the two from a generator of its own), `foreign_429` (a share of the
API requests answered 429 as if another application of the account had spent the budget; drawn from a
generator of its own, so the other faults of a spec fall on the same requests with or without it) and
`reorder` (N: when a walk of a paged list first asks for a page after the first, its first N records
move to the end of the list, as an update moves a record to the end of a list ordered by update;
`sandbox/moving.py`). `timeline=1` (a measure, not a fault) adds to the stats, per API operation, when
its first request arrived and its last answer left, in seconds since the stats were reset (bench/remote.py).

Dropping a connection needs the socket: an exception raised before the response starts would make
uvicorn answer a 500, not close the connection. The outer ASGI wrapper therefore keeps uvicorn's
request cycle (the owner of `send`) in the scope, and `close_connection` closes its transport.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
from collections.abc import MutableMapping
from dataclasses import dataclass, fields
from typing import Any

# What a poisoned record becomes: a lone surrogate (`\ud83d`, as JavaScript writes half an emoji) at the
# end of its first text field; a `customFields` object nested DEEP_LEVELS levels; its first integer
# field beyond 64 bits; its first text field HUGE_STRING characters long.
POISON_KINDS = ("surrogate", "deep", "huge_number", "huge_string")
DEEP_LEVELS = 254
HUGE_NUMBER = 2**70
HUGE_STRING = 2_000_000
STALL_SECONDS = 3600
SHARE_KEYS = ("error", "slow", "drop", "truncate", "foreign_429")
ERROR_STATUSES = (500, 502, 503)
CYCLE_KEY = "sandbox.cycle"
NAMED_OPERATIONS = ("malformed", "loose_envelope", "stall", "newest_first")  # faults naming operations


@dataclass(frozen=True)
class FaultSpec:
    error: float = 0.0
    slow: float = 0.0
    drop: float = 0.0
    truncate: float = 0.0
    slow_seconds: float = 2.0
    revoke_after: int | None = None
    seed: int = 0
    poison: tuple[tuple[str, str], ...] = ()  # (kind, record id)
    malformed: tuple[str, ...] = ()  # operation names
    loose_envelope: tuple[str, ...] = ()  # operation names
    stall: tuple[str, ...] = ()  # operation names: answered 429 with `Retry-After: STALL_SECONDS`
    newest_first: tuple[str, ...] = ()  # operation names: paged lists served in reverse order
    latency_ms: float = 0.0
    latency_max_ms: float = 0.0  # above latency_ms: each answer waits uniformly between the two
    foreign_429: float = 0.0
    reorder: int = 0
    timeline: int = 0

    @classmethod
    def parse(cls, text: str | None) -> FaultSpec:
        """Parse `error=0.05,slow=0.02,...`; empty, `off` or `none` mean no faults. ValueError if bad."""
        values: dict[str, Any] = {}
        if text is None or text.strip().lower() in ("", "off", "none"):
            return cls()
        for item in text.split(","):
            key, sep, raw = item.strip().partition("=")
            key = key.strip()
            if not sep:
                raise ValueError(f"fault {item.strip()!r} is not key=value")
            values[key] = _parse_value(key, raw.strip())
        spec = cls(**values)
        if spec.error + spec.drop + spec.truncate > 1.0:
            raise ValueError("error + drop + truncate must not exceed 1")
        if spec.latency_max_ms and spec.latency_max_ms < spec.latency_ms:
            raise ValueError("latency_max_ms must not be below latency_ms")
        return spec

    def format(self) -> str:
        """The spec back as text, only the keys that differ from no faults."""
        default = FaultSpec()
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == getattr(default, f.name):
                continue
            if f.name == "poison":
                value = "+".join(f"{kind}@{ident}" for kind, ident in value)
            elif f.name in NAMED_OPERATIONS:
                value = "+".join(value)
            parts.append(f"{f.name}={value:g}" if isinstance(value, float) else f"{f.name}={value}")
        return ",".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _parse_value(key: str, raw: str) -> Any:
    if key == "poison":
        return _parse_poison(raw)
    if key in NAMED_OPERATIONS:
        names = tuple(name.strip() for name in raw.split("+"))
        if not all(names):
            raise ValueError(f"fault {key}={raw!r} must name operations, joined by +")
        return names
    try:
        if key in SHARE_KEYS:
            share = float(raw)
            if not 0.0 <= share <= 1.0:
                raise ValueError
            return share
        if key == "slow_seconds":
            seconds = float(raw)
            if not 0.0 <= seconds <= 600.0:
                raise ValueError
            return seconds
        if key in ("latency_ms", "latency_max_ms"):
            milliseconds = float(raw)
            if not 0.0 <= milliseconds <= 60_000.0:
                raise ValueError
            return milliseconds
        if key in ("revoke_after", "seed", "reorder", "timeline"):
            number = int(raw)
            if number < (1 if key == "revoke_after" else 0) or (key == "timeline" and number > 1):
                raise ValueError
            return number
    except ValueError:
        raise ValueError(f"fault {key}={raw!r} has an invalid value") from None
    raise ValueError(f"unknown fault {key!r}; known: {', '.join(f.name for f in fields(FaultSpec))}")


def _parse_poison(raw: str) -> tuple[tuple[str, str], ...]:
    poisons = []
    for part in raw.split("+"):
        kind, sep, ident = part.strip().partition("@")
        if not sep or kind not in POISON_KINDS or not ident:
            kinds = ", ".join(POISON_KINDS)
            raise ValueError(f"fault poison={raw!r}: each part is KIND@ID, KIND one of {kinds}")
        poisons.append((kind, ident))
    return tuple(poisons)


def poison_payload(payload: Any, poisons: tuple[tuple[str, str], ...]) -> Any | None:
    """The answer (a page with `items`, or a detail) with its named records made unreadable, or None if
    it carries none of them. The records are copied, never changed where the world keeps them. The
    answer must then be written by `render_poisoned` (orjson refuses what it now holds)."""
    paged = isinstance(payload, dict) and isinstance(payload.get("items"), list)
    records = payload["items"] if paged else [payload]
    out, hit = [], False
    for record in records:
        ident = _record_id(record)
        kinds = [kind for kind, named in poisons if ident is not None and ident == named]
        if kinds:
            record, hit = copy.deepcopy(record), True
            for kind in kinds:
                _poison(record, kind)
        out.append(record)
    if not hit:
        return None
    return {**payload, "items": out} if paged else out[0]


def render_poisoned(payload: Any) -> bytes:
    """JSON as JavaScript's `JSON.stringify` writes it: a lone surrogate as its escape, any integer."""
    return json.dumps(payload, separators=(",", ":")).encode("ascii")


MALFORMED_BODY = b'{"items": [{"id": 1,, "broken'


def _record_id(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    ident = record.get("id")
    if ident is None and isinstance(record.get("document"), dict):
        ident = record["document"].get("id")
    return None if ident is None else str(ident)


def _poison(record: dict[str, Any], kind: str) -> None:
    if kind == "deep":
        nested: Any = "bottom"
        for _ in range(DEEP_LEVELS):
            nested = {"level": nested}
        record["customFields"] = nested
        return
    wanted = int if kind == "huge_number" else str
    field_name = next(
        (k for k, v in record.items() if k != "id" and type(v) is wanted),
        "poisonedNumber" if kind == "huge_number" else "poisonedText",
    )
    if kind == "surrogate":
        record[field_name] = f"{record.get(field_name) or ''}\ud83d"
    elif kind == "huge_number":
        record[field_name] = HUGE_NUMBER
    else:
        record[field_name] = "x" * HUGE_STRING


@dataclass(frozen=True)
class Fault:
    """What happens to one API request."""

    kind: str | None = None  # "error", "drop", "truncate" or None
    status: int = 0  # for "error"
    delay: float = 0.0  # seconds to wait before answering (the "slow" fault)
    revoke: bool = False  # revoke the request's token and answer 401
    latency: float = 0.0  # seconds every answer waits (`latency_ms`)
    foreign: bool = False  # answer 429 as if another client of the account had spent the budget


NO_FAULT = Fault()


class FaultInjector:
    """Draws the fault of each API request from the spec's seeded generator."""

    def __init__(self, spec: FaultSpec | None = None):
        self.set(spec or FaultSpec())

    def set(self, spec: FaultSpec) -> None:
        """Install a spec; the generator and the request count restart, so runs are reproducible."""
        self.spec = spec
        self._rng = random.Random(spec.seed)
        self._foreign_rng = random.Random(f"foreign-429-{spec.seed}")
        self._latency_rng = random.Random(f"latency-{spec.seed}")
        self.requests = 0

    @property
    def active(self) -> bool:
        s = self.spec
        return bool(s.error or s.slow or s.drop or s.truncate or s.revoke_after)

    def next(self) -> Fault:
        self.requests += 1
        s = self.spec
        latency = s.latency_ms / 1000.0
        if s.latency_max_ms > s.latency_ms:  # drawn apart: the other faults fall as without a range
            latency = self._latency_rng.uniform(s.latency_ms, s.latency_max_ms) / 1000.0
        foreign = bool(s.foreign_429) and self._foreign_rng.random() < s.foreign_429
        if not self.active:
            return Fault(latency=latency, foreign=foreign) if latency or foreign else NO_FAULT
        kind_draw, slow_draw, status_draw = self._rng.random(), self._rng.random(), self._rng.random()
        kind: str | None = None
        if kind_draw < s.error:
            kind = "error"
        elif kind_draw < s.error + s.drop:
            kind = "drop"
        elif kind_draw < s.error + s.drop + s.truncate:
            kind = "truncate"
        return Fault(
            kind=kind,
            status=ERROR_STATUSES[min(int(status_draw * len(ERROR_STATUSES)), len(ERROR_STATUSES) - 1)],
            delay=s.slow_seconds if slow_draw < s.slow else 0.0,
            revoke=s.revoke_after is not None and self.requests == s.revoke_after,
            latency=latency,
            foreign=foreign,
        )


async def close_connection(scope: MutableMapping[str, Any]) -> bool:
    """Close the client's connection with nothing more sent; False if the server gives no access."""
    cycle = scope.get(CYCLE_KEY)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    transport.close()
    # uvicorn learns of the close on a later loop turn; once it has, it sends nothing (no 500).
    for _ in range(100):
        if getattr(cycle, "disconnected", True):
            break
        await asyncio.sleep(0)
    return True


def loosen_envelope(payload: dict[str, Any], path: str) -> dict[str, Any]:
    """A paged envelope as a looser server writes it (the `loose_envelope` fault): every number as text,
    an unknown `nextPage` link, `pages` and `totalItems` left out of even pages, and `pages` one more than
    there is, so that the walk's last request gets an empty page."""
    page = int(payload["page"])
    pages = int(payload["pages"]) + 1
    loose: dict[str, Any] = {
        "items": payload["items"],
        "page": str(page),
        "itemsPerPage": str(payload["itemsPerPage"]),
        "nextPage": f"{path}?page={page + 1}" if page < pages else None,
    }
    if page % 2:
        loose["pages"] = str(pages)
        loose["totalItems"] = str(payload["totalItems"])
    return loose
