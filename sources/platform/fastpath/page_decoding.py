"""What a helper process does to one page (`offload.py` runs the helpers): validate its records as the
sync's process would and pack them into an Arrow table, reading the records that depart from the spec
with the same `records.RecordReader`; or say that the page must be decoded in the sync's process.

A function of the job (and of which streams' last pages departed), so that it can be tested without a
helper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import pyarrow as pa
from dlt.common.schema.typing import C_DLT_ID

from sources.platform.fastpath.columnar import Layout, page_table
from sources.platform.models import DepartingRecord, Departure, parse_page_leniently, parse_page_strictly
from sources.platform.records import RecordReader, RecordShape
from sources.platform_client.errors import MalformedResponseError
from sources.platform_client.paging import Page, parse_envelope, record_keys, unseen_items


class PackedResource(RecordShape, Protocol):
    """What packing a resource's pages needs of its declaration (`resources.stream.Stream` is one)."""

    @property
    def operation(self) -> str: ...
    def columnar_layout(self) -> Layout | None: ...


@dataclass(frozen=True)
class PageJob:
    """One page body to decode, and what its table needs besides the records. The resource's declaration
    travels with the job: it says what to pack (its model, key and added columns)."""

    stream: PackedResource
    requested_page: int
    content: bytes
    extra: Mapping[str, Any] | None = None
    load_id: str | None = None
    # Read records that depart from the spec (off: `strict`, left to this process), and the incremental
    # cursor's field: rows where it departed come back apart (`DecodedPage.cursor_departed`).
    tolerant: bool = True
    cursor: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class DecodedPage:
    """A page of a list as the source walks it (`page_stage.py`), whichever process decoded it: the
    envelope's numbers and `items`, either the records as JSON objects (decoded in this process, read
    into rows by the reader's `RecordReader`) or the Arrow table a helper packed them into. Beside a
    helper's table, the rows Arrow cannot carry (`leftover`), what departed from the spec record by record
    (`departures`), and the rows whose incremental cursor field departed (`cursor_departed`: loaded, never
    shown to the cursor, `records.new_rows`' rule)."""

    items: pa.Table | list[dict[str, Any]]
    page: int
    pages: int
    total_items: int
    items_per_page: int
    leftover: list[dict[str, Any]] = field(default_factory=list)
    departures: list[tuple[str | None, list[Departure]]] = field(default_factory=list)
    cursor_departed: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, page: Page) -> DecodedPage:
        """A page of JSON records (the client's envelope, or a helper's empty page)."""
        return cls(page.items, page.page, page.pages, page.total_items, page.items_per_page)

    def record_count(self) -> int:
        """The page's records: those in the table and those set apart beside it."""
        return len(self.items) + len(self.leftover) + len(self.cursor_departed)

    def repeats(self, other: Any) -> bool:
        """Whether this page holds the same records as `other` (`paging.Page.repeats`); tables are
        compared without their row ids, random per row, the first rows first."""
        if not isinstance(other, DecodedPage):
            return False
        mine, theirs = self.items, other.items
        if isinstance(mine, list) or isinstance(theirs, list):
            return isinstance(mine, list) and isinstance(theirs, list) and mine == theirs
        if mine.num_rows != theirs.num_rows:
            return False
        ignored = [C_DLT_ID] if C_DLT_ID in mine.column_names else []
        records, others = mine.drop_columns(ignored), theirs.drop_columns(ignored)
        return records.slice(0, 1).equals(others.slice(0, 1)) and records.equals(others)

    def record_keys(self) -> list[Any] | None:
        """The records' `id`s (a fiscal document's `document.id`; of a table, the column of that name),
        or None when they carry none."""
        if isinstance(self.items, list):
            return record_keys(self.items)
        for name in ("id", "document__id"):
            if name in self.items.column_names:
                column: list[Any] = self.items.column(name).to_pylist()
                return None if any(key is None for key in column) else column
        return None

    def unseen(self, yielded: set[int]) -> DecodedPage:
        """The page without the records already yielded (a distinct walk); a table is kept whole."""
        if not isinstance(self.items, list):
            return self
        kept = unseen_items(self.items, yielded)
        return self if len(kept) == len(self.items) else replace(self, items=kept)


# A page a helper packed whole, nothing departing: a `DecodedPage` with nothing set apart.
PackedPage = DecodedPage


class _Departures:
    """What a helper's `RecordReader` found, to send back; a quarantined record leaves the page to this
    process, which knows the token to redact."""

    def __init__(self) -> None:
        self.found: list[tuple[str | None, list[Departure]]] = []
        self.quarantined = False

    def record(self, resource: str, record_id: Any, departures: Sequence[Departure]) -> None:
        self.found.append((None if record_id is None else str(record_id), list(departures)))

    def quarantine(
        self, resource: str, reason: str, record_id: Any, raw: Any, redact: Callable[[str], str]
    ) -> None:
        self.quarantined = True


def decode_page(job: PageJob, departing: set[str] | None = None) -> Page | DecodedPage | None:
    """The page with its records validated and packed into one Arrow table, or None if this page must
    be decoded the ordinary way (see the module's docstring). Run by the helpers; a function of the job
    (and of `departing`, the streams whose last page had a record that departs from the spec, which the
    helper keeps), so that it can be tested here.

    Where records depart, most pages have one (at 3%, 95% of pages of 100): once a stream's page had
    one, its next page is read leniently at once instead of strictly first."""
    stream = job.stream
    layout = stream.columnar_layout()
    if layout is None:
        return None
    departing = set() if departing is None else departing
    if job.tolerant and stream.name in departing:
        return _decode_tolerantly(job, layout, departing)
    try:
        document = parse_page_strictly(stream.model, job.content)
    except ValueError:  # a record departs from the spec, or the body is no page at all
        return _decode_tolerantly(job, layout, departing) if job.tolerant else None
    try:
        page = parse_envelope(document, operation=job.stream.operation, requested_page=job.requested_page)
    except MalformedResponseError:
        return None
    rows = page.items
    if not rows:
        return page
    if job.extra:
        for row in rows:
            row.update(job.extra)
    table = page_table(layout, rows, job.load_id, known_keys=True)
    if table is None:
        return None
    return PackedPage(table, page.page, page.pages, page.total_items, page.items_per_page)


def _decode_tolerantly(job: PageJob, layout: Layout, departing: set[str]) -> DecodedPage | None:
    """A page read leniently (`parse_page_leniently`): the records that depart from the spec are read one
    by one as this process would (`records.RecordReader`). None when a record is quarantined (this
    process knows the token to redact from it). The rows whose cursor field departed come back apart,
    never shown to a cursor. A page where nothing departs comes back as a plain page."""
    stream = job.stream
    try:
        document = parse_page_leniently(stream.model, job.content)
        items = document["items"]
        # The envelope is checked on the records as they came.
        as_sent = [item.raw if type(item) is DepartingRecord else item for item in items]
        page = parse_envelope(
            {**document, "items": as_sent}, operation=job.stream.operation, requested_page=job.requested_page
        )
    except (ValueError, MalformedResponseError):
        return None
    found = _Departures()
    reader = RecordReader(strict=False, log=found, redact=str)
    packable: list[dict[str, Any]] = []  # in the page's order
    leftover: list[dict[str, Any]] = []
    cursor_departed: list[dict[str, Any]] = []
    departed = False
    for item in items:
        if type(item) is not DepartingRecord:
            if job.extra:
                item.update(job.extra)
            packable.append(item)  # read strictly: no field the model does not know
            continue
        departed = True
        for row, cursor_moved_away in reader.read(stream, [item.raw], job.extra, job.cursor):
            if cursor_moved_away:
                cursor_departed.append(row)
            elif layout.shape.holds(row):
                packable.append(row)
            else:
                leftover.append(row)
    if found.quarantined:
        return None
    if departed:
        departing.add(stream.name)
    else:
        departing.discard(stream.name)
    table = page_table(layout, packable, job.load_id, known_keys=True) if packable else None
    if table is None:
        return None
    if not departed:
        return PackedPage(table, page.page, page.pages, page.total_items, page.items_per_page)
    return DecodedPage(
        table,
        page.page,
        page.pages,
        page.total_items,
        page.items_per_page,
        leftover,
        found.found,
        cursor_departed,
    )
