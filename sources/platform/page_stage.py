"""The one stage where a page of a list becomes the batches a reader yields (issue 29).

A page arrives from `PlatformClient.paginate` in one of two forms: its records as JSON objects (decoded
in this process), or, for the large flat lists, already validated and packed into an Arrow table by a
helper process (`fastpath/offload.py`: the client offers it each body through the hook `helper_decode`
returns). `page_batches` turns either into the same thing for the reader: the batches to show the cursor
and load, and the rows set apart (loaded, never shown to the cursor: those whose cursor field departs
from the spec). `packed` then packs what is still rows into Arrow tables where the model allows it.
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
from sources.platform_client.client import PageDecode
from sources.platform_client.paging import Page


def helper_decode(
    decoder: PageDecoder | None,
    stream: PackedResource,
    *,
    tolerant: bool,
    extra: Mapping[str, Any] | None = None,
    cursor: tuple[str, ...] | None = None,
) -> PageDecode | None:
    """The hook through which a walk over the stream's pages hands their bodies to the helper processes,
    if it can: there are helpers and the stream's model is flat. The rows whose `cursor` field departs
    from the spec come back apart (`DecodedPage.cursor_departed`)."""
    if decoder is None or stream.columnar_layout() is None:
        return None
    load_id = current_load_id()

    def decode(content: bytes, number: int) -> Page | None:
        if number < decoder.from_page:
            return None
        return decoder.decode(PageJob(stream, number, content, extra, load_id, tolerant, cursor))

    return decode


def page_batches(
    records: RecordReader,
    departures: DepartureSink,
    stream: PackedResource,
    page: Page,
    extra: Mapping[str, Any] | None = None,
    cursor: tuple[str, ...] | None = None,
) -> tuple[list[Batch], Rows]:
    """The page's batches to show the cursor and load, and the rows set apart: those whose `cursor` field
    departs from the spec (loaded, never shown to the cursor; none without a `cursor`). A page a helper
    packed is its table and the rows it left as rows, its departures recorded here; any other page is
    read here (`records.RecordReader`)."""
    if not isinstance(page.items, pa.Table):
        tracked = records.read(stream, page.items, extra, cursor)
        if cursor is None:
            return [[row for row, _ in tracked]], []
        return [[row for row, departed in tracked if not departed]], [
            row for row, departed in tracked if departed
        ]
    if isinstance(page, DecodedPage):
        for record_id, found in page.departures:
            departures.record(stream.name, record_id, found)
        return [page.items, *([page.leftover] if page.leftover else [])], page.cursor_departed
    return [page.items], []


def packed(stream: PackedResource, batches: Iterable[Batch]) -> Iterator[Batch]:
    """The batches as Arrow tables where the stream's model is flat (dlt then skips normalizing them row
    by row), else as they are; see `fastpath/columnar.py`."""
    layout = stream.columnar_layout()
    if layout is None:
        return iter(batches)
    new_fields = NewFields(layout, stream.name, current_source_schema())
    return packed_pages(layout, batches, current_load_id(), new_fields)
