"""A page becomes the same batches whichever process decoded it (`page_stage.py`, issue 29)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
import pyarrow as pa

from sources.platform.fastpath.batches import Batch, values_at
from sources.platform.fastpath.page_decoding import PageJob, decode_page
from sources.platform.models import Departure
from sources.platform.page_stage import page_batches
from sources.platform.records import RecordReader
from sources.platform.resources import STREAMS
from sources.platform_client.paging import Page, parse_envelope
from tests.sources.platform.models.test_models import RECORD_OF_TABLE, record

EMISSION = ("document", "emissionDate")
DOCUMENT_ID = ("document", "id")


class Sink:
    """Departures and quarantined records, as the run's report would get them."""

    def __init__(self) -> None:
        self.departures: list[tuple[str, str | None, list[tuple[str, str]]]] = []
        self.quarantined: list[str] = []

    def record(self, resource: str, record_id: Any, departures: Sequence[Departure]) -> None:
        self.departures.append((resource, record_id, [(d.path, d.kind) for d in departures]))

    def quarantine(
        self, resource: str, reason: str, record_id: Any, raw: Any, redact: Callable[[str], str]
    ) -> None:
        self.quarantined.append(reason)


def _body() -> bytes:
    items = []
    for index in range(3):
        item = record(RECORD_OF_TABLE["fiscal_documents"])
        item["document"]["id"] = f"doc-{index}"
        items.append(item)
    items[1]["document"]["emissionDate"] = "2026-05-01"  # a date without a time: departs, loads apart
    document = {"page": 4, "pages": 9, "itemsPerPage": 100, "totalItems": 850, "items": items}
    return orjson.dumps(document)


def _ids(batches: list[Batch]) -> list[str]:
    return [value for batch in batches for value in values_at(batch, DOCUMENT_ID)]


def test_a_page_decoded_here_or_by_a_helper_gives_the_reader_the_same_rows_apart_and_departures() -> None:
    stream = STREAMS["fiscal_documents"]
    body = _body()
    here = parse_envelope(orjson.loads(body), operation=stream.operation, requested_page=4)
    helper = decode_page(PageJob(stream, 4, body, None, "1763900000.1", True, EMISSION))
    assert helper is not None and isinstance(helper.items, pa.Table)
    outcomes = []
    for page in (here, helper):
        sink = Sink()
        reader = RecordReader(strict=False, log=sink, redact=str)
        batches, apart = page_batches(reader, sink, stream, page, cursor=EMISSION)
        outcomes.append((_ids(batches), [row["document"]["id"] for row in apart], sink.departures))
    expected_departures = [("fiscal_documents", "doc-1", [("document.emissionDate", "converted")])]
    assert outcomes[0] == (["doc-0", "doc-2"], ["doc-1"], expected_departures)
    assert outcomes[1] == outcomes[0]


def test_without_a_cursor_no_row_is_set_apart() -> None:
    stream = STREAMS["fiscal_documents"]
    page: Page = parse_envelope(orjson.loads(_body()), operation=stream.operation, requested_page=4)
    sink = Sink()
    batches, apart = page_batches(RecordReader(strict=False, log=sink, redact=str), sink, stream, page)
    assert (_ids(batches), apart) == (["doc-0", "doc-1", "doc-2"], [])
    assert sink.departures == [("fiscal_documents", "doc-1", [("document.emissionDate", "converted")])]
