"""Where a record can depart from its spec shape, and departing it there.

A site is a place in one record (a location: keys and list indices from the root) and a kind of
departure. `sites()` walks a record beside its `spec_shapes` schema and lists every site that the rules
allow: key fields and references are never touched, nor the ancestors that hold them; `null` and
`missing` only where the spec (or the contract's documented nulls) does not allow a null; typed
departures only where a value is present.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sandbox import spec_shapes as shapes
from sandbox.drift import values

KINDS = ("null", "missing", "unlisted_value", "unlisted_field", "converted", "unconvertible")
Location = tuple[str | int, ...]
NEW_KEY = "\x00new"  # stands for the key an unlisted_field adds, until it is chosen


@dataclass(frozen=True)
class Rules:
    """What may not depart in one operation's records."""

    protected: frozenset[str]  # paths never departed (keys, sale references)
    nullable: frozenset[str] = frozenset()  # paths null by the contract's documented choice
    date_only: bool = True  # False where date-only is documented as allowed (transfers)

    @cached_property
    def _holding(self) -> frozenset[str]:
        return frozenset(
            ".".join(p.split(".")[:n]) for p in self.protected for n in range(1, p.count(".") + 2)
        )

    def holds_protected(self, path: str) -> bool:
        """`path` is protected or contains a protected path (so it may be neither null nor missing)."""
        return path in self._holding


@dataclass(frozen=True)
class Site:
    location: Location
    path: str
    kind: str
    schema: Any  # the spec type at the location (unwrapped from Opt); the object's schema for new fields


@dataclass(frozen=True)
class Departure:
    """One departure made: the row the sandbox reports (without operation and record id)."""

    path: str
    kind: str
    value: Any


def sites(record: dict[str, Any], schema: dict[str, Any], rules: Rules) -> list[Site]:
    found: list[Site] = []
    _object(record, schema, (), "", rules, found)
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _object(
    value: Any, schema: dict[str, Any], loc: Location, path: str, rules: Rules, out: list[Site]
) -> None:
    if not isinstance(value, dict):
        return
    out.append(Site(loc + (NEW_KEY,), path, "unlisted_field", schema))
    for key, sub in schema.items():
        if key not in value:
            continue
        child_path = _join(path, key)
        if child_path in rules.protected:
            continue
        child = value[key]
        nullable = isinstance(sub, shapes.Opt) or child_path in rules.nullable
        if child is not None and not nullable and not rules.holds_protected(child_path):
            out.append(Site(loc + (key,), child_path, "null", sub))
            out.append(Site(loc + (key,), child_path, "missing", sub))
        if child is not None:
            inner = sub.schema if isinstance(sub, shapes.Opt) else sub
            _value(child, inner, loc + (key,), child_path, rules, out)


def _value(value: Any, schema: Any, loc: Location, path: str, rules: Rules, out: list[Site]) -> None:
    if isinstance(schema, dict):
        _object(value, schema, loc, path, rules, out)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            return
        item_schema, item_path = schema[0], path + "[]"
        for index, item in enumerate(value):
            if item is None:
                continue
            if not isinstance(item_schema, dict | list):  # a list of scalars: an element may be null
                out.append(Site(loc + (index,), item_path, "null", item_schema))
            _value(item, item_schema, loc + (index,), item_path, rules, out)
    elif isinstance(schema, shapes.Enum):
        if isinstance(value, str) and values.has_unlisted_values(schema):
            out.append(Site(loc, path, "unlisted_value", schema))
    elif schema in (shapes.N, shapes.B, shapes.DT) and _is(value, schema):
        out.append(Site(loc, path, "converted", schema))
        out.append(Site(loc, path, "unconvertible", schema))


def _is(value: Any, kind: str) -> bool:
    if kind == shapes.N:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == shapes.B:
        return isinstance(value, bool)
    return isinstance(value, str)


def choose(found: list[Site], count: int, rng: random.Random) -> list[Site]:
    """Up to `count` sites, none inside another; the kind is drawn first, so rare kinds are as likely."""
    by_kind: dict[str, list[Site]] = {}
    for site in found:
        by_kind.setdefault(site.kind, []).append(site)
    kinds = [kind for kind in KINDS if kind in by_kind]
    chosen: list[Site] = []
    for _ in range(count * 4):  # a few tries more than needed: a draw may overlap an earlier one
        if len(chosen) == count or not kinds:
            break
        site = rng.choice(by_kind[rng.choice(kinds)])
        if not any(_overlap(site.location, other.location) for other in chosen):
            chosen.append(site)
    return chosen


def _overlap(a: Location, b: Location) -> bool:
    """One location contains the other (or they are the same place)."""
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]


def apply(record: dict[str, Any], site: Site, rules: Rules, rng: random.Random) -> Departure:
    """Depart `record` (a private copy) at `site`; returns what the sandbox reports."""
    parent: Any = record
    for step in site.location[:-1]:
        parent = parent[step]
    last = site.location[-1]
    if site.kind == "unlisted_field":
        name, new = values.unlisted_field(set(parent) | set(site.schema), rng)
        parent[name] = new
        return Departure(_join(site.path, name), site.kind, None)
    if site.kind == "missing":
        del parent[last]
        return Departure(site.path, site.kind, None)
    if site.kind == "null":
        parent[last] = None
        return Departure(site.path, site.kind, None)
    parent[last] = _typed(parent[last], site, rules, rng)
    return Departure(site.path, site.kind, parent[last])


def _typed(value: Any, site: Site, rules: Rules, rng: random.Random) -> Any:
    if site.kind == "unlisted_value":
        return values.unlisted_value(site.schema, rng)
    if site.kind == "unconvertible":
        return values.unconvertible(site.schema)
    if site.schema == shapes.N:
        return values.convert_number(value)
    if site.schema == shapes.B:
        return values.convert_boolean(value, rng)
    return values.convert_datetime(value, rng, rules.date_only)
