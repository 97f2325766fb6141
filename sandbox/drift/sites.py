"""Where a record can depart from its spec shape, and departing it there.

A site is a place in one record (a location: keys and list indices from the root) and a kind of
departure. `sites()` walks a record beside its `spec_shapes` schema and lists every site that the rules
allow: key fields and references are never touched, nor the ancestors that hold them; `null` and
`missing` only where the spec (or the contract's documented nulls) does not allow a null; typed
departures only where a value is present; unlisted fields only where the API "added" one
(`new_fields`).

An API adds a field the way it adds a column: under one name, in one object of its model, and the
records written since carry it. So each family of records gets `NEW_FIELDS_PER_FAMILY` new fields, each
at a fixed object path chosen by the drift seed (one of them nested whenever the shape nests objects),
and a record departing with `unlisted_field` carries one of them. (A new name at any object of every
record would add hundreds of sparse columns no real API sends: the fiscal documents alone had 125.)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sandbox import spec_shapes as shapes
from sandbox.drift.values import (
    NEW_FIELD_NAMES,
    convert_boolean,
    convert_datetime,
    convert_number,
    has_unlisted_values,
    new_field_value,
    unconvertible,
    unlisted_value,
)

KINDS = ("null", "missing", "unlisted_value", "unlisted_field", "converted", "unconvertible")
Location = tuple[str | int, ...]
NEW_KEY = "\x00new"  # stands for the key an unlisted_field adds, until it is chosen
NEW_FIELDS_PER_FAMILY = 2


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
    schema: Any  # the spec type at the location (unwrapped from Opt); the name of a new field


@dataclass(frozen=True)
class Departure:
    """One departure made: the row the sandbox reports (without operation and record id)."""

    path: str
    kind: str
    value: Any


def sites(
    record: dict[str, Any], schema: dict[str, Any], rules: Rules, new_fields: Mapping[str, str]
) -> list[Site]:
    """Every site of `record`; `new_fields` maps an object path ("" for the record) to the name of the
    field the API added there."""
    found: list[Site] = []
    _object(record, schema, (), "", rules, new_fields, found)
    return found


def object_paths(schema: dict[str, Any]) -> list[str]:
    """The paths of the objects in a spec schema: "" for the record, `buyer.address`, `items[]`."""
    out: list[str] = []

    def walk(shape: Any, where: str) -> None:
        shape = shape.schema if isinstance(shape, shapes.Opt) else shape
        if isinstance(shape, dict):
            out.append(where)
            for key, sub in shape.items():
                walk(sub, _join(where, key))
        elif isinstance(shape, list):
            walk(shape[0], where + "[]")

    walk(schema, "")
    return out


_NEW_FIELDS: dict[tuple[str, int], dict[str, str]] = {}


def new_fields(schema: dict[str, Any], family: str, seed: int) -> dict[str, str]:
    """Where the API added a field to this family's records, and its name (see the module's docstring)."""
    known = _NEW_FIELDS.get((family, seed))
    if known is None:
        known = _NEW_FIELDS[(family, seed)] = _choose_new_fields(schema, family, seed)
    return known


def _choose_new_fields(schema: dict[str, Any], family: str, seed: int) -> dict[str, str]:
    digest = hashlib.blake2b(f"{seed}\x1f{family}\x1fnew-fields".encode(), digest_size=8).digest()
    rng = random.Random(int.from_bytes(digest))
    paths = object_paths(schema)
    nested = [p for p in paths if p]
    chosen = [rng.choice(nested)] if nested else []
    rest = [p for p in paths if p not in chosen]
    chosen += rng.sample(rest, min(NEW_FIELDS_PER_FAMILY - len(chosen), len(rest)))
    return {path: _free_name(schema, path, rng) for path in chosen}


def _free_name(schema: dict[str, Any], path: str, rng: random.Random) -> str:
    shape: Any = schema
    for step in path.split(".") if path else []:
        shape = shape.schema if isinstance(shape, shapes.Opt) else shape
        shape = shape[step.removesuffix("[]")]
        shape = shape.schema if isinstance(shape, shapes.Opt) else shape
        if step.endswith("[]"):
            shape = shape[0]
    shape = shape.schema if isinstance(shape, shapes.Opt) else shape
    return rng.choice([name for name in NEW_FIELD_NAMES if name not in shape])


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _object(
    value: Any,
    schema: dict[str, Any],
    loc: Location,
    path: str,
    rules: Rules,
    new: Mapping[str, str],
    out: list[Site],
) -> None:
    if not isinstance(value, dict):
        return
    if path in new and new[path] not in value:
        out.append(Site(loc + (NEW_KEY,), path, "unlisted_field", new[path]))
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
            _value(child, inner, loc + (key,), child_path, rules, new, out)


def _value(
    value: Any, schema: Any, loc: Location, path: str, rules: Rules, new: Mapping[str, str], out: list[Site]
) -> None:
    if isinstance(schema, dict):
        _object(value, schema, loc, path, rules, new, out)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            return
        item_schema, item_path = schema[0], path + "[]"
        for index, item in enumerate(value):
            if item is None:
                continue
            if not isinstance(item_schema, dict | list):  # a list of scalars: an element may be null
                out.append(Site(loc + (index,), item_path, "null", item_schema))
            _value(item, item_schema, loc + (index,), item_path, rules, new, out)
    elif isinstance(schema, shapes.Enum):
        if isinstance(value, str) and has_unlisted_values(schema):
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
        name = site.schema  # the new field's name (`new_fields`)
        parent[name] = new_field_value(name, rng)
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
        return unlisted_value(site.schema, rng)
    if site.kind == "unconvertible":
        return unconvertible(site.schema)
    if site.schema == shapes.N:
        return convert_number(value)
    if site.schema == shapes.B:
        return convert_boolean(value, rng)
    return convert_datetime(value, rng, rules.date_only)
