"""Helper processes decode pages exactly as this process would, or leave them to it (`offload.py`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
import pyarrow as pa
import pytest

from sources.platform.cursor import Cursor
from sources.platform.fastpath.batches import observe_newest
from sources.platform.fastpath.columnar import page_table
from sources.platform.fastpath.offload import PageDecoder
from sources.platform.fastpath.page_decoding import DecodedPage, PackedPage, PageJob, decode_page
from sources.platform.models import Departure, parse_record
from sources.platform.records import RecordReader
from sources.platform.resources import STREAMS
from sources.platform.settings import decode_workers_or_default
from sources.platform_client.errors import ConfigurationError, PagingLoopError
from sources.platform_client.paging import UNKNOWN, Page, PageWalk
from tests.sources.platform.models.test_models import RECORD_OF_TABLE, record

LOAD_ID = "1763900000.123456"
# The flat streams read by paged walks, with the extra column a reader adds to their rows, if any.
PAGED_FLAT = {
    "products": None,
    "affiliations": None,
    "transfers": None,
    "fiscal_documents": None,
    "lesson_comments": {"course_id": 31},
}


def _items(stream_name: str, count: int = 3) -> list[dict[str, Any]]:
    items = []
    for index in range(count):
        item = record(RECORD_OF_TABLE[stream_name])
        if stream_name == "fiscal_documents":
            item["document"]["id"] = f"doc-{index}"
        else:
            item["id"] = type(item["id"])(f"{index + 1}{item['id']}")
        items.append(item)
    return items


def _body(items: list[Any], page: int = 4, pages: Any = 9, **envelope: Any) -> bytes:
    document = {"page": page, "pages": pages, "itemsPerPage": 100, "totalItems": 850, "items": items}
    document.update(envelope)
    return orjson.dumps(document)


def _job(
    stream_name: str, content: bytes, extra: dict[str, Any] | None = None, tolerant: bool = True
) -> PageJob:
    return PageJob(STREAMS[stream_name], 4, content, extra, LOAD_ID, tolerant)


def _here(stream_name: str, items: list[dict[str, Any]], extra: dict[str, Any] | None) -> pa.Table:
    """The table this process packs from the same items."""
    stream = STREAMS[stream_name]
    rows = [{**parse_record(stream.model, dict(item)), **(extra or {})} for item in items]
    layout = stream.columnar_layout()
    assert layout is not None
    table = page_table(layout, rows, LOAD_ID)
    assert table is not None
    return table


def _without_row_ids(table: pa.Table) -> pa.Table:
    return table.drop_columns(["_dlt_id"])


@pytest.fixture
def decoder() -> Iterator[PageDecoder]:
    decoder = PageDecoder(1)
    yield decoder
    decoder.close()


@pytest.mark.parametrize("stream_name", PAGED_FLAT)
def test_a_helper_decodes_a_page_exactly_as_this_process_would(
    stream_name: str, decoder: PageDecoder
) -> None:
    items = _items(stream_name)
    extra = PAGED_FLAT[stream_name]
    page = decoder.decode(_job(stream_name, _body(items), extra))
    assert page is not None
    assert (page.page, page.pages, page.total_items, page.items_per_page) == (4, 9, 850, 100)
    assert isinstance(page.items, pa.Table)
    expected = _here(stream_name, items, extra)
    assert page.items.schema == expected.schema
    assert _without_row_ids(page.items).equals(_without_row_ids(expected))
    row_ids = page.items.column("_dlt_id").to_pylist()
    assert len(set(row_ids)) == len(items) and all(row_ids)
    assert decoder.decoded_pages == 1
    assert decoder.running_helpers == 1
    decoder.close()
    assert decoder.running_helpers == 0
    assert decoder.decode(_job(stream_name, _body(items), extra)) is None  # closed: decoded here


@pytest.mark.parametrize("stream_name", PAGED_FLAT)
def test_after_a_departing_page_the_next_is_read_leniently_into_the_same_table(stream_name: str) -> None:
    """Once a stream's page departed, a helper reads its next page leniently (one pass): a page where
    nothing departs comes out exactly as read strictly, and the stream is read strictly again."""
    items = _items(stream_name)
    extra = PAGED_FLAT[stream_name]
    strictly = decode_page(_job(stream_name, _body(items), extra))
    departing = {stream_name}
    leniently = decode_page(_job(stream_name, _body(items), extra), departing)
    assert type(strictly) is PackedPage and type(leniently) is PackedPage  # no departures
    assert isinstance(strictly.items, pa.Table) and isinstance(leniently.items, pa.Table)
    assert leniently.items.schema == strictly.items.schema
    assert _without_row_ids(leniently.items).equals(_without_row_ids(strictly.items))
    assert departing == set()
    departed = [dict(item) for item in items]
    departed[1] = {**departed[1], "addedByTheApi": 1}
    again = decode_page(_job(stream_name, _body(departed), extra), departing)
    assert isinstance(again, DecodedPage) and len(again.leftover) == 1
    assert departing == {stream_name}


def _unknown_enum(items: list[dict[str, Any]]) -> None:
    items[1]["status"] = "BRAND_NEW_STATUS"


def _unknown_field(items: list[dict[str, Any]]) -> None:
    items[0]["addedByTheApi"] = 1


def _unknown_nested_field(items: list[dict[str, Any]]) -> None:
    items[2]["bankAccount"]["addedByTheApi"] = "x"


def _missing_field(items: list[dict[str, Any]]) -> None:
    del items[2]["createdAt"]


def _eleven_decimals(items: list[dict[str, Any]]) -> None:
    items[0]["value"]["value"] = 1.12345678901


class _Collected:
    def __init__(self) -> None:
        self.found: list[tuple[str | None, list[Departure]]] = []

    def record(self, resource: str, record_id: Any, departures: Any) -> None:
        self.found.append((str(record_id), list(departures)))

    def quarantine(self, *args: Any) -> None:
        raise AssertionError("nothing here is quarantined")


@pytest.mark.parametrize(
    ("change", "left_as_rows"),
    [(_unknown_enum, 0), (_unknown_field, 1), (_unknown_nested_field, 1), (_missing_field, 0)],
)
def test_a_helper_reads_a_page_that_departs_from_the_spec_exactly_as_this_process_would(
    change: Any, left_as_rows: int
) -> None:
    items = _items("transfers")
    change(items)
    page = decode_page(_job("transfers", _body(items)))
    assert isinstance(page, DecodedPage) and isinstance(page.items, pa.Table)
    here = _Collected()
    rows = [row for row, _ in RecordReader(False, here, str).read(STREAMS["transfers"], items)]
    assert here.found and page.departures == here.found  # the same departures, record by record
    assert len(page.leftover) == left_as_rows  # the rows with a field the model does not know
    packed = [row for row in rows if row not in page.leftover]
    assert page.items.num_rows == len(packed) == len(rows) - left_as_rows
    layout = STREAMS["transfers"].columnar_layout()
    assert layout is not None
    assert _without_row_ids(page.items) == _without_row_ids(page_table(layout, packed, LOAD_ID))
    # the same page, read strictly, is left to this process (which fails the resource)
    assert decode_page(_job("transfers", _body(items), tolerant=False)) is None


@pytest.mark.parametrize(
    ("change", "why"),
    [(_eleven_decimals, "a decimal Arrow cannot carry exactly")],
)
def test_a_page_that_is_not_packable_is_left_to_this_process(change: Any, why: str) -> None:
    items = _items("transfers")
    change(items)
    assert decode_page(_job("transfers", _body(items))) is None, why


def test_a_row_whose_cursor_value_departed_comes_back_apart_from_the_table() -> None:
    items = _items("fiscal_documents")
    items[1]["document"]["emissionDate"] = "2026-05-01"
    job = PageJob(
        STREAMS["fiscal_documents"],
        4,
        _body(items),
        None,
        LOAD_ID,
        True,
        ("document", "emissionDate"),
    )
    page = decode_page(job)
    assert isinstance(page, DecodedPage)
    # the other rows are packed, the departed one apart: loaded, but never shown to the cursor
    assert page.items.num_rows == len(items) - 1
    assert [row["document"]["id"] for row in page.cursor_departed] == [items[1]["document"]["id"]]
    assert page.cursor_departed[0]["document"]["emissionDate"] == datetime(2026, 5, 1, tzinfo=UTC)
    assert [(d.path, d.kind) for _, found in page.departures for d in found] == [
        ("document.emissionDate", "converted")
    ]
    assert page.leftover == []


def test_a_page_with_an_unkeyed_record_is_left_to_this_process() -> None:
    items = _items("transfers")
    items[1]["id"] = None
    assert decode_page(_job("transfers", _body(items))) is None  # quarantined here, the token redacted


@pytest.mark.parametrize(
    "content",
    [b'{"page": 4, "items": [', b"[]", b'{"page": 4, "pages": 9}', _body([{"id": 1}, 3])],
    ids=["not JSON", "not an envelope", "no items", "an item that is no object"],
)
def test_a_malformed_page_is_left_to_this_process_which_names_the_problem(content: bytes) -> None:
    assert decode_page(_job("transfers", content)) is None


def test_a_page_whose_counts_are_text_or_no_number_is_packed_with_them_unknown() -> None:
    """Issue 48: the envelope read as tolerantly as the records (`paging.parse_envelope`)."""
    items = _items("transfers")
    page = decode_page(_job("transfers", _body(items, pages="nine", totalItems="850", itemsPerPage="100")))
    assert page is not None and not isinstance(page, Page)
    assert (page.pages, page.total_items, page.items_per_page) == (UNKNOWN, 850, 100)
    assert page.items.num_rows == len(items)


def test_a_list_with_child_tables_is_never_decoded_by_a_helper() -> None:
    items = [record(RECORD_OF_TABLE["subscriptions"])]
    assert decode_page(_job("subscriptions", _body(items))) is None


def test_an_empty_page_comes_back_as_an_empty_page() -> None:
    page = decode_page(_job("transfers", _body([], page=9, pages=9)))
    assert page == Page([], 9, 9, 850, 100)


def test_a_helper_that_dies_leaves_its_pages_to_this_process_and_says_so(
    decoder: PageDecoder, caplog: pytest.LogCaptureFixture
) -> None:
    content = _body(_items("transfers"))
    assert decoder.decode(_job("transfers", content)) is not None
    [helper] = decoder._helpers
    helper.process.kill()
    helper.process.wait()
    with caplog.at_level(logging.WARNING, logger="platform_sync.offload"):
        assert decoder.decode(_job("transfers", content)) is None
        assert decoder.decode(_job("transfers", content)) is None
    [warning] = [r.getMessage() for r in caplog.records]
    assert "decoding pages in a helper process stopped" in warning
    assert "decoded in this process" in warning
    assert len(decoder._helpers) == 1  # not started again
    assert decoder.decoded_pages == 1


def test_a_page_repeated_as_a_table_is_a_paging_loop() -> None:
    """Tables decoded by a helper carry new row ids every time; the walk compares the records."""
    items = _items("transfers")
    first = decode_page(_job("transfers", _body(items, page=1, pages=3)))
    again = decode_page(_job("transfers", _body(items, page=2, pages=3)))
    assert first is not None and again is not None
    walk = PageWalk("list_transfers")
    assert walk.accept(first)
    assert walk.next() == 2
    with pytest.raises(PagingLoopError, match="page 2 repeats the items of page 1"):
        walk.accept(again)


def test_the_newest_value_of_a_table_moves_a_cursor_as_its_rows_would() -> None:
    items = _items("fiscal_documents", 4)
    dates = ["2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z", "2024-03-02T10:00:00Z", "2024-02-01T00:00:00Z"]
    for item, date in zip(items, dates, strict=True):
        item["document"]["emissionDate"] = date
    page = decode_page(_job("fiscal_documents", _body(items)))
    assert page is not None and isinstance(page.items, pa.Table)
    rows = [parse_record(STREAMS["fiscal_documents"].model, item) for item in items]
    states: list[dict[str, Any]] = [{}, {}]
    for state, batch in zip(states, (rows, page.items), strict=True):
        cursor = Cursor(state, "emission_date")
        observe_newest(cursor, batch, ("document", "emissionDate"), ("document", "id"))
        cursor.commit()
    assert states[0] == states[1]
    assert states[0]["emission_date"]["ids"] == ["doc-1", "doc-2"]
    assert datetime.fromisoformat(states[0]["emission_date"]["value"]) == datetime(2024, 3, 2, 10, tzinfo=UTC)


@pytest.mark.parametrize(("cores", "workers"), [(1, 0), (2, 1), (16, 1), (None, 0)])
def test_one_helper_by_default_where_there_is_a_core_for_it(cores: int | None, workers: int) -> None:
    assert decode_workers_or_default(None, cores) == workers


def test_configured_helpers_are_kept_and_checked() -> None:
    assert decode_workers_or_default(0, 16) == 0
    assert decode_workers_or_default(3, 2) == 3
    for wrong in (-1, "two", True, 1.5):
        with pytest.raises(ConfigurationError, match="decode_workers must be a whole number"):
            decode_workers_or_default(wrong, 2)  # type: ignore[arg-type]


def test_pages_sent_to_a_helper_together_come_back_each_to_its_own_caller(decoder: PageDecoder) -> None:
    """Several threads keep jobs queued in one helper; each gets the page of its own job."""
    bodies = {
        number: _body(_items("transfers", number % 3 + 1), page=number, pages=40) for number in range(4, 40)
    }
    pages: dict[int, Page | None] = {}

    def decode(number: int) -> None:
        pages[number] = decoder.decode(PageJob(STREAMS["transfers"], number, bodies[number], None, LOAD_ID))

    threads = [threading.Thread(target=decode, args=(number,)) for number in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number, page in pages.items():
        assert page is not None and page.page == number
        assert isinstance(page.items, pa.Table) and page.items.num_rows == number % 3 + 1
    assert decoder.decoded_pages == len(bodies)
    assert decoder.running_helpers == 1
