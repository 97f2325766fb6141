"""From a page's records to the rows to load: tolerant of what departs from the spec, never losing a record
silently, never letting a departed cursor value move a cursor."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel

from sources.platform.cursor import Cursor
from sources.platform.fastpath.columnar import column_name
from sources.platform.models import Departure, RecordValidationError, parse_record
from sources.platform.models.hints import unwrap_optional
from sources.platform.models.parse import Problem
from sources.platform.models.tolerant import PERSONAL_KEYS
from sources.platform.unreadable import Mended, mend, unreadable

MENDED = "mended"  # a departure kind: a value that could not be loaded as sent, replaced (`mend`)


class RecordShape(Protocol):
    """What reading a resource's records needs of its declaration (`resources.stream.Stream` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> type[BaseModel]: ...
    @property
    def primary_key(self) -> tuple[str, ...]: ...
    @property
    def extra_columns(self) -> Mapping[str, Mapping[str, Any]]: ...


TrackedRows = list[tuple[dict[str, Any], bool]]


class DepartureSink(Protocol):
    """Where a `RecordReader` puts departures and quarantined records (`departures.DepartureLog`, or what
    a helper process sends back)."""

    def record(self, resource: str, record_id: Any, departures: Sequence[Departure]) -> None: ...

    def quarantine(
        self, resource: str, reason: str, record_id: Any, raw: Any, redact: Callable[[str], str]
    ) -> None: ...


@dataclass(frozen=True)
class RecordReader:
    """Reads records into rows for one run: `strict` or tolerant, departures and quarantine into `log`,
    secrets `redact`ed from quarantined JSON."""

    strict: bool
    log: DepartureSink
    redact: Callable[[str], str]

    def read(
        self,
        stream: RecordShape,
        items: Iterable[Any],
        extra: Mapping[str, Any] | None = None,
        cursor: tuple[str, ...] | None = None,
    ) -> TrackedRows:
        """The rows of a page's records, each with whether its `cursor` field departed from the spec (a
        null, a date-only timestamp...: such a row is loaded but must not move an incremental cursor).

        A record that departs from the spec loads and its departures go to `log`; with `strict` it
        raises `RecordValidationError` instead. A value that cannot be loaded as sent (`unreadable.py`: a
        lone surrogate, nesting too deep, an integer beyond 64 bits) is replaced (`unreadable.mend`) and
        the record loads, the replacement recorded as a departure (`mended`); with `strict` it raises.
        Only a record that cannot be keyed (not an object, no usable key) goes to the quarantine."""
        out = []
        cursor_path = ".".join(cursor) if cursor else None
        paths = key_paths(stream)
        for item in items:
            departures: list[Departure] = []
            if (problem := unreadable(item)) is not None:  # a bad value costs that value (`mend`)
                if self.strict:
                    record_id = _record_key(paths, item)[0]
                    raise RecordValidationError(stream.name, record_id, [Problem("(record)", None, problem)])
                item, mended = mend(item)
                departures += [Departure(m.path, MENDED, _kept_original(m)) for m in mended]
            try:
                row = parse_record(
                    stream.model, item, strict=self.strict, resource=stream.name, departures=departures
                )
            except RecordValidationError:
                if self.strict:
                    raise
                self.log.quarantine(stream.name, "not a JSON object", None, item, self.redact)
                continue
            record_id, unkeyed = _record_key(paths, item)
            if unkeyed:
                self.log.quarantine(stream.name, unkeyed, record_id, item, self.redact)
                continue
            if unlisted := {d.path for d in departures if d.kind == "unlisted_field"}:
                if aside := set_aside_clashing_names(row, unlisted):
                    gone = {d.path for d in aside}
                    departures = [d for d in departures if d.path not in gone] + aside
            if departures:
                self.log.record(stream.name, record_id, departures)
            if extra:
                row.update(extra)
            out.append((row, cursor_path is not None and any(d.path == cursor_path for d in departures)))
        return out


def _kept_original(mended: Mended) -> str | None:
    """What the departures table keeps of a replaced value: why, and its original where it can be kept
    (never a personal free text: `models.PERSONAL_KEYS`)."""
    key = mended.path.rsplit(".", 1)[-1].removesuffix("[]")
    original = None if key in PERSONAL_KEYS else mended.original
    return mended.reason if original is None else f"{mended.reason}: {original}"


def set_aside_clashing_names(
    row: dict[str, Any], unlisted: set[str], prefix: str = "", top: bool = True, inside: bool = False
) -> list[Departure]:
    """Take out of the row (in place, at every level) the fields the spec does not list (`unlisted`:
    their paths) that dlt would load into no column of their own, and return them as departures
    (`unloadable_name`, with name and value): a name that makes no column (`__`, ` `), one that makes
    the column of another field of the same object (`ID` beside `id`, `requested_at` beside
    `requestedAt`: dlt would load one over the other, the key included), and at the top of a table a
    name of dlt's own columns (`_dlt_id`). The fields of the spec keep their columns."""
    found: list[Departure] = []
    taken: set[str] = set()

    def order(key: Any) -> tuple[bool, bool, str]:  # the spec's fields first, then names like theirs
        unknown = inside or f"{prefix}{key}" in unlisted
        return (unknown, not _plain(key), str(key))

    for key in sorted(row, key=order):
        path = f"{prefix}{key}"
        unknown = inside or path in unlisted
        name = column_name((key,)) if isinstance(key, str) else ""
        value = row[key]
        if unknown and (not name or name in taken or (top and name.startswith("_dlt_"))):
            del row[key]
            found.append(Departure(path, "unloadable_name", _named(key, value)))
            continue
        taken.add(name)
        if isinstance(value, dict):
            found += set_aside_clashing_names(value, unlisted, f"{path}.", False, unknown)
        elif isinstance(value, list):
            for element, element_path in _child_rows(value, f"{path}[]"):  # its own `_dlt_` columns too
                found += set_aside_clashing_names(element, unlisted, f"{element_path}.", True, unknown)
    return found


def _child_rows(items: list[Any], path: str) -> Iterator[tuple[dict[str, Any], str]]:
    """The objects of a list, and of the lists inside it at any depth (dlt makes a child table of each
    level: `field`, `field__list`, ...), each with its path (`field[]`, `field[][]`, ...)."""
    for element in items:
        if isinstance(element, dict):
            yield element, path
        elif isinstance(element, list):
            yield from _child_rows(element, f"{path}[]")


def _plain(key: Any) -> bool:
    """Whether the name is as the API's own names are (camelCase letters and digits)."""
    return isinstance(key, str) and key.isascii() and key.isalnum()


def _named(key: str, value: Any) -> str:
    return json.dumps({key: value}, default=str, ensure_ascii=False)


def new_rows(cursor: Cursor, tracked: TrackedRows, field: str) -> list[dict[str, Any]]:
    """The rows not loaded yet at the cursor's boundary, shown to the cursor. A row whose cursor field
    departed from the spec (null, date-only...) is always loaded and never moves the cursor: its value
    may be earlier or later than the instant the API filtered on."""
    rows = []
    for row, departed in tracked:
        if departed:
            rows.append(row)
        elif cursor.is_new(row[field], row["id"]):
            cursor.observe(row[field], row["id"])
            rows.append(row)
    return rows


def record_key(stream: RecordShape, record: Any) -> tuple[str | None, str | None]:
    """The key of a record as the API sent it (its key fields joined by `/`), and why it cannot be
    keyed, if it cannot: a key field missing, null, empty or of another shape than a string or an
    integer. The key columns that config adds (`extra_columns`) are not the record's."""
    return _record_key(key_paths(stream), record)


def key_paths(stream: RecordShape) -> tuple[tuple[str, ...], ...]:
    """The API paths of the key columns that come from the resource's records."""
    return _key_paths(stream.model, stream.primary_key, frozenset(stream.extra_columns))


def _record_key(paths: tuple[tuple[str, ...], ...], record: Any) -> tuple[str | None, str | None]:
    parts = []
    for path in paths:
        value: Any = record
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        dotted = ".".join(path)
        if value is None or value == "":
            return (None, f"no key: {dotted} is missing, null or empty")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return (None, f"the key {dotted} is a {type(value).__name__}, not a string or a number")
        if isinstance(value, float) and not value.is_integer():
            return (None, f"the key {dotted} is a fractional number")
        parts.append(str(int(value)) if isinstance(value, float) else str(value))
    return "/".join(parts), None


@cache
def _key_paths(
    model: type[BaseModel], primary_key: tuple[str, ...], added: frozenset[str]
) -> tuple[tuple[str, ...], ...]:
    """The API paths of the key columns that come from the records (dlt column names)."""
    by_column = {column_name(path): path for path in _leaf_paths(model)}
    return tuple(by_column[key] for key in primary_key if key not in added)


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, info in model.model_fields.items():
        tp, _ = unwrap_optional(info.annotation)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            paths += _leaf_paths(tp, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths
