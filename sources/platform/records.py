"""From a page's records to the rows to load: tolerant of what departs from the spec, never losing a record
silently, never letting a departed cursor value move a cursor."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sources.platform.cursor import Cursor
from sources.platform.models import Departure, RecordValidationError, parse_record
from sources.platform.streams import Stream, record_key

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
        stream: Stream,
        items: Iterable[Any],
        extra: Mapping[str, Any] | None = None,
        cursor: tuple[str, ...] | None = None,
    ) -> TrackedRows:
        """The rows of a page's records, each with whether its `cursor` field departed from the spec (a
        null, a date-only timestamp...: such a row is loaded but must not move an incremental cursor).

        A record that departs from the spec loads and its departures go to `log`; with `strict` it
        raises `RecordValidationError` instead. A record that cannot be keyed (not an object, no usable
        key) goes to the quarantine."""
        out = []
        cursor_path = ".".join(cursor) if cursor else None
        for item in items:
            departures: list[Departure] = []
            try:
                row = parse_record(
                    stream.model, item, strict=self.strict, resource=stream.name, departures=departures
                )
            except RecordValidationError:
                if self.strict:
                    raise
                self.log.quarantine(stream.name, "not a JSON object", None, item, self.redact)
                continue
            record_id, unkeyed = record_key(stream, item)
            if unkeyed:
                self.log.quarantine(stream.name, unkeyed, record_id, item, self.redact)
                continue
            if departures:
                self.log.record(stream.name, record_id, departures)
            if extra:
                row.update(extra)
            out.append((row, cursor_path is not None and any(d.path == cursor_path for d in departures)))
        return out


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
