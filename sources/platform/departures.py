"""What the API sent that departs from its spec in one run, and the records it sent that cannot be keyed.

Readers record into a ``DepartureLog`` as they parse; each resource, once read, hands dlt its share as
rows of two tables in the raw dataset, in the same load package as the data they describe:

- ``_platform_departures``: one row per resource, field path and kind per load, with the number of
  records, an example record id, and a child table ``_platform_departures__values`` holding the
  unlisted enumeration values (with their record counts) and the original of every value that could not
  be converted (with its record id). Free-text personal fields never give a value, only the kind.
- ``_platform_quarantine``: one row per record that could not be loaded because it cannot be keyed (no
  key, a key of the wrong shape, not a JSON object), with the reason and its raw JSON.

None of this fails a resource; quarantined records make the run partial (exit status 3).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import dlt
from dlt.common.schema.typing import TColumnSchema
from dlt.extract.items import DataItemWithMeta
from dlt.extract.resource import DltResource
from dlt.extract.source import DltSource

from sources.platform.models import Departure
from sources.platform.unreadable import safe_json, valid_text

DEPARTURES_TABLE = "_platform_departures"
QUARANTINE_TABLE = "_platform_quarantine"
# A cursor value later than the API's clock (`runclock.py`): the record loads, the cursor stays.
FUTURE_KIND = "in_the_future"
_SUMMARY_LINES = 12
_VALUES_SHOWN = 3


@dataclass
class _Tally:
    """One resource, field path and kind in this run."""

    record_ids: set[str] = field(default_factory=set)
    example_record_id: str | None = None
    value_records: dict[str, set[str]] = field(default_factory=dict)  # unlisted value -> its records
    originals: list[tuple[str | None, str]] = field(default_factory=list)  # unconvertible: (id, value)


@dataclass(frozen=True)
class Quarantined:
    resource: str
    reason: str
    record_id: str | None
    raw_json: str


class DepartureLog:
    """Departures and quarantined records of one run, by resource. Thread-safe: resources are read in
    dlt's extract thread pool.

    A run loaded in passes (checkpoints) hands each pass's load what that pass saw (`next_pass`): the
    rows of a load are its own records' departures; the summary and `quarantined()` are the run's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tallies: dict[tuple[str, str, str], _Tally] = {}  # the run's
        self._pass_tallies: dict[tuple[str, str, str], _Tally] = {}  # the pass's, for its load
        self._quarantined: list[Quarantined] = []
        self._pass_quarantined: list[Quarantined] = []
        self._quarantined_once: set[Quarantined] = set()
        self._emitted: set[str] = set()

    def next_pass(self) -> None:
        """A new pass of the run (its own load): its resources hand over what they see from now on."""
        with self._lock:
            self._pass_tallies = {}
            self._pass_quarantined = []
            self._emitted = set()

    def record(self, resource: str, record_id: Any, departures: Sequence[Departure]) -> None:
        """Count the departures of one record (its key as the API sent it)."""
        ident = None if record_id is None else str(record_id)
        with self._lock:
            for departure in departures:
                key = (resource, departure.path, departure.kind)
                for tally in (
                    self._tallies.setdefault(key, _Tally()),
                    self._pass_tallies.setdefault(key, _Tally()),
                ):
                    _count(tally, ident, departure)

    def quarantine(
        self, resource: str, reason: str, record_id: Any, raw: Any, redact: Callable[[str], str]
    ) -> None:
        """Keep a record that cannot be keyed or loaded, with secrets (``redact``) removed from its JSON,
        kept as text that can be stored (`unreadable.safe_json`: what it changed is added to the reason)."""
        text, changed = safe_json(raw)
        reason = f"{reason} (raw_json: {changed})" if changed else reason
        ident = None if record_id is None else valid_text(str(record_id))
        item = Quarantined(resource, reason, ident, redact(text))
        with self._lock:  # one row per record, however often a list walked again brings it back
            if item not in self._quarantined_once:
                self._quarantined_once.add(item)
                self._quarantined.append(item)
                self._pass_quarantined.append(item)

    def quarantined(self, resource: str | None = None) -> list[Quarantined]:
        with self._lock:
            return [q for q in self._quarantined if resource is None or q.resource == resource]

    def departure_rows(self, resource: str) -> list[dict[str, Any]]:
        """The rows of ``_platform_departures`` for one resource (with their ``values`` child rows), of
        the records this pass saw."""
        with self._lock:
            tallies = [(key, tally) for key, tally in self._pass_tallies.items() if key[0] == resource]
        rows = []
        for (_, path, kind), tally in sorted(tallies, key=lambda item: item[0]):
            values = [
                {"value": value, "record_id": None, "records": len(ids)}
                for value, ids in sorted(tally.value_records.items())
            ]
            values += [{"value": value, "record_id": ident, "records": 1} for ident, value in tally.originals]
            rows.append(
                {
                    "resource": resource,
                    "field_path": path,
                    "kind": kind,
                    "records": len(tally.record_ids),
                    "example_record_id": tally.example_record_id,
                    "values": values,
                }
            )
        return rows

    def items_for(self, resource: str) -> Iterator[DataItemWithMeta]:
        """What one resource hands dlt once it was read: its departures and its quarantined records, as
        rows of their own tables. Once per resource and pass (a run in one pass: once per run)."""
        with self._lock:
            if resource in self._emitted:
                return
            self._emitted.add(resource)
        if rows := self.departure_rows(resource):
            yield dlt.mark.with_table_name(rows, DEPARTURES_TABLE)
        with self._lock:
            quarantined = [q for q in self._pass_quarantined if q.resource == resource]
        if quarantined:
            rows = [
                {"resource": q.resource, "reason": q.reason, "record_id": q.record_id, "raw_json": q.raw_json}
                for q in quarantined
            ]
            yield dlt.mark.with_table_name(rows, QUARANTINE_TABLE)

    def summary(self) -> list[str]:
        """A few lines for the run's summary, the most frequent first."""
        with self._lock:
            tallies = sorted(self._tallies.items(), key=lambda item: (-len(item[1].record_ids), item[0]))
        lines = [_line(resource, path, kind, tally) for (resource, path, kind), tally in tallies]
        if len(lines) > _SUMMARY_LINES:
            rest = len(lines) - _SUMMARY_LINES + 1
            lines = [*lines[: _SUMMARY_LINES - 1], f"... and {rest} more (see the table {DEPARTURES_TABLE})"]
        return lines


def _count(tally: _Tally, ident: str | None, departure: Departure) -> None:
    """One record's departure, in `tally`."""
    if ident is not None:
        tally.record_ids.add(ident)
        if tally.example_record_id is None:
            tally.example_record_id = ident
    if departure.value is None:
        return
    if departure.kind == "unlisted_value":
        tally.value_records.setdefault(_as_text(departure.value), set()).add(ident or "")
    elif departure.kind in ("unconvertible", "unloadable_name", "mended"):
        tally.originals.append((ident, _as_text(departure.value)))


def _line(resource: str, path: str, kind: str, tally: _Tally) -> str:
    records = _records(len(tally.record_ids))
    if kind == "unlisted_value":
        counted = sorted(tally.value_records.items(), key=lambda item: (-len(item[1]), item[0]))
        shown = ", ".join(f"{value} ({_records(len(ids))})" for value, ids in counted[:_VALUES_SHOWN])
        more = f", and {len(counted) - _VALUES_SHOWN} more" if len(counted) > _VALUES_SHOWN else ""
        count = len(counted)
        noun = "value" if count == 1 else "values"
        return f"{resource}: {path} had {count} {noun} the spec does not list: {shown}{more}"
    what = {
        "null": "was null where the spec has no null",
        "missing": "was missing where the spec has no null",
        "unlisted_field": "is a field the spec does not list (loaded as a column)",
        "converted": "came as another JSON type than documented (converted without loss)",
        "unconvertible": f"could not be converted (loaded as null; originals in {DEPARTURES_TABLE})",
        "malformed": "was not of the documented format (loaded as text)",
        "unloadable_name": (
            "is a field whose name makes no column of its own (empty, or the column of another field): "
            f"left out, its values in {DEPARTURES_TABLE}"
        ),
        "mended": (
            "could not be loaded as sent (an invalid code point, nesting too deep, an integer beyond 64 "
            f"bits): replaced, the record loaded; what was replaced in {DEPARTURES_TABLE}"
        ),
        FUTURE_KIND: "was later than the API's clock (loaded; the cursor did not move to it)",
    }[kind]
    return f"{resource}: {path} {what} in {records}"


def _records(count: int) -> str:
    return f"{count} record" if count == 1 else f"{count} records"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def declare_tables(resource: DltResource) -> None:
    """Declare the departures and quarantine tables on a resource that yields into them (`items_for`).

    dlt starts a table variant from the resource's own hints (its columns, key, merge, child tables);
    these tables share none of them, so the variants are first emptied, then declared."""
    for table, columns in ((DEPARTURES_TABLE, _DEPARTURES_COLUMNS), (QUARANTINE_TABLE, _QUARANTINE_COLUMNS)):
        resource.apply_hints(
            table_name=table,
            create_table_variant=True,
            write_disposition="append",
            columns={},
            primary_key="",
            merge_key="",
            nested_hints={},
            file_format=cast(Any, ""),  # "": no file format of the resource's
        )
        resource.apply_hints(table_name=table, create_table_variant=True, columns=columns)


def load_tables_as(source: DltSource, file_format: Any) -> None:
    """Write the departures and quarantine tables in the run's file format (`run`'s `loader_file_format`),
    as the resources' own tables: dlt applies that format to a resource's own table only, and the
    tables declared by `declare_tables` would be loaded as the destination prefers (SQL inserts on
    DuckDB, far slower: bench/README.md)."""
    if not file_format:
        return
    for resource in source.resources.values():
        for table in (DEPARTURES_TABLE, QUARANTINE_TABLE):
            resource.apply_hints(table_name=table, create_table_variant=True, file_format=file_format)


_TEXT: TColumnSchema = {"data_type": "text", "nullable": True}
_DEPARTURES_COLUMNS: dict[str, TColumnSchema] = {
    "resource": {"data_type": "text", "nullable": False},
    "field_path": {"data_type": "text", "nullable": False},
    "kind": {"data_type": "text", "nullable": False},
    "records": {"data_type": "bigint", "nullable": False},
    "example_record_id": _TEXT,
}
_QUARANTINE_COLUMNS: dict[str, TColumnSchema] = {
    "resource": {"data_type": "text", "nullable": False},
    "reason": {"data_type": "text", "nullable": False},
    "record_id": _TEXT,
    "raw_json": {"data_type": "text", "nullable": False},
}
