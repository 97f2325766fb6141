"""The one stage where a page of a list becomes the batches a reader yields (issue 29: one road).

The client fetches a page's body and nothing more (`platform_client.paged_list.PagedList.fetch`). Here,
in the thread that fetched it (a walk fetches pages ahead in its pool's threads), the body is decoded
into one `DecodedPage`: by a helper process (`fastpath/offload.py`, from a walk's `from_page`th page
on, for a flat model with `arrow_pages` on), which validates and packs it into an Arrow table; or, when
there is no helper or it leaves the page, here: the JSON envelope (`PagedList.envelope`). A body that
does not decode is asked for again under the client's retry policy (`PagedList.retry_malformed`).

When the reader takes a page, `page_batches` makes it the same thing whichever process decoded it: the
batches to show the cursor and load, and the rows set apart (loaded, never shown to the cursor: those
whose cursor field departs from the spec). Records decoded here are read into rows then
(`records.RecordReader`), so that a page fetched ahead and dropped, or a record a distinct walk drops,
records no departure and quarantines nothing. `packed` packs what is still rows into Arrow tables after
the reader (`fastpath/columnar.packed_pages`: tables joined across pages into batches of `BATCH_ROWS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from sources.platform.extraction import current_load_id, current_source_schema
from sources.platform.fastpath.batches import Batch, Rows
from sources.platform.fastpath.columnar import packed_pages
from sources.platform.fastpath.new_fields import NewFields
from sources.platform.fastpath.offload import PageDecoder
from sources.platform.fastpath.page_decoding import DecodedPage, PackedResource, PageJob
from sources.platform.records import DepartureSink, RecordReader
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import MalformedResponseError
from sources.platform_client.paged_list import PagedList, RawPage
from sources.platform_client.paging import Page


class PageRoad:
    """The road of the pages of one stream's walks: fetched by the client, decoded (in a helper or here),
    taken by the reader as batches. Made in the reader's thread (it reads the load id there); its walks
    may run in other threads (`fastpath/interleave.py`)."""

    def __init__(
        self,
        client: PlatformClient,
        stream: PackedResource,
        decoder: PageDecoder | None,
        *,
        tolerant: bool,
        extra: Mapping[str, Any] | None = None,
        cursor: tuple[str, ...] | None = None,
    ) -> None:
        self._client = client
        self._stream = stream
        # the helpers, if the stream's model is flat: the rows whose `cursor` field departs come back apart
        self._decoder = decoder if decoder is not None and stream.columnar_layout() is not None else None
        self._load_id = current_load_id() if self._decoder is not None else None
        self._tolerant = tolerant
        self._extra = extra
        self._cursor = cursor

    def walk(
        self,
        params: Mapping[str, Any] | None = None,
        path_params: Mapping[str, Any] | None = None,
        distinct: bool = False,
    ) -> Iterator[DecodedPage]:
        """The pages of one list of the stream's operation, decoded (`walking.walk_pages`)."""
        listing = self._client.paged(self._stream.operation, path_params, dict(params or {}))
        return listing.walk(lambda number: self.fetch(listing, number), distinct)

    def fetch(self, listing: PagedList, number: int) -> DecodedPage:
        """Page `number`, fetched and decoded; a body that does not decode asked for again per the
        client's retry policy (the tries of one page count together)."""
        attempt = 1
        while True:
            raw = listing.fetch(number, attempt)
            try:
                return self.decode(listing, raw)
            except MalformedResponseError as error:
                listing.retry_malformed(error, raw.attempts)
                attempt = raw.attempts + 1

    def decode(self, listing: PagedList, raw: RawPage) -> DecodedPage:
        """The page by a helper if it takes it, else its JSON envelope decoded here."""
        decoder = self._decoder
        if decoder is not None and raw.number >= decoder.from_page:
            job = PageJob(
                self._stream,
                raw.number,
                raw.content,
                self._extra,
                self._load_id,
                self._tolerant,
                self._cursor,
            )
            if (page := decoder.decode(job)) is not None:
                return page
        return DecodedPage.of(listing.envelope(raw))


def page_batches(
    records: RecordReader,
    departures: DepartureSink,
    stream: PackedResource,
    page: Page | DecodedPage,
    extra: Mapping[str, Any] | None = None,
    cursor: tuple[str, ...] | None = None,
) -> tuple[list[Batch], Rows]:
    """The page's batches to show the cursor and load, and the rows set apart: those whose `cursor` field
    departs from the spec (loaded, never shown to the cursor; none without a `cursor`). A page a helper
    packed is its table and the rows it left as rows, its departures recorded here; a page of JSON
    records is read here (`records.RecordReader`)."""
    if isinstance(page, DecodedPage) and isinstance(page.items, pa.Table):
        for record_id, found in page.departures:
            departures.record(stream.name, record_id, found)
        return [page.items, *([page.leftover] if page.leftover else [])], page.cursor_departed
    tracked = records.read(stream, page.items, extra, cursor)
    if cursor is None:
        return [[row for row, _ in tracked]], []
    return [[row for row, departed in tracked if not departed]], [
        row for row, departed in tracked if departed
    ]


def packed(stream: PackedResource, batches: Iterable[Batch]) -> Iterator[Batch]:
    """The batches as Arrow tables where the stream's model is flat (dlt then skips normalizing them row
    by row), else as they are; see `fastpath/columnar.py`."""
    layout = stream.columnar_layout()
    if layout is None:
        return iter(batches)
    new_fields = NewFields(layout, stream.name, current_source_schema())
    return packed_pages(layout, batches, current_load_id(), new_fields)
