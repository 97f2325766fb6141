"""The tail of a list sent oldest first (issue 47, `walking.walk_tail`): the page the last read ended on
is asked first for the list's size now, then the pages after it, the last first, then the pages before
it one by one until the caller stops; robust to a list that shrank, a server counting pages from 0, one
that announces no size, and one that answers another page than asked. Concurrency is proven by a barrier
the requests must reach together, never by timing."""

from __future__ import annotations

import threading

import httpx
import pytest

from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import PagingLoopError
from sources.platform_client.paging import Page

SIZE = 5


class Pages:
    """`list_transfers` over `count` records, `SIZE` a page, numbered from `first`; `announce` off sends
    no `pages` or `totalItems`; `shift` answers each page with the numbers of another. Requests of pages
    in `together` wait at a barrier of that many parties; a page past the end answers `past_end`."""

    def __init__(
        self, count: int, first: int = 1, announce: bool = True, shift: int = 0, together=(), past_end=200
    ) -> None:
        self.count, self.first, self.announce, self.shift = count, first, announce, shift
        self.past_end = past_end  # the status of a page past the end
        self.requested: list[int] = []
        self.lock = threading.Lock()
        self.together = set(together)
        self.barrier = threading.Barrier(len(self.together), timeout=10) if self.together else None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        number = int(request.url.params["page"])
        with self.lock:
            self.requested.append(number)
        if self.barrier is not None and number in self.together:
            self.barrier.wait()
        index = number - self.first
        if index * SIZE >= self.count and index > 0 and self.past_end != 200:
            return httpx.Response(self.past_end, json={"message": "page out of range"})
        ids = list(range(index * SIZE, min(self.count, (index + 1) * SIZE))) if index >= 0 else []
        body: dict[str, object] = {
            "page": number + self.shift,
            "itemsPerPage": SIZE,
            "items": [{"id": i} for i in ids],
        }
        if self.announce:
            body |= {"pages": -(-self.count // SIZE), "totalItems": self.count}
        return httpx.Response(200, json=body)


def tail(api: Pages, known_last: int, first: int = 1, stop_at: int | None = None, **options) -> list[int]:
    """The page numbers the tail walk yields, the caller stopping after page `stop_at`."""
    options.setdefault("backoff_base", 0.0)
    options.setdefault("rate_limits", {"list_transfers": 1_000_000})
    client = PlatformClient(
        "https://api.platform.test", "tok", transport=httpx.MockTransport(api), items_per_page=SIZE, **options
    )
    with client:
        listing = client.paged("list_transfers")
        yielded: list[int] = []
        walk = listing.walk_tail(listing.json_page, first, known_last)
        for page in walk:
            assert isinstance(page, Page) and page.items
            yielded.append(page.page)
            if page.page == stop_at:
                walk.close()
                break
    return yielded


def test_the_pages_after_the_last_one_read_come_last_first_then_the_known_page():
    api = Pages(count=23)  # 5 pages; the last read ended on page 3
    assert tail(api, known_last=3, stop_at=3) == [5, 4, 3]
    assert api.requested[0] == 3 and sorted(api.requested) == [3, 4, 5]  # nothing below the known page


def test_the_pages_before_the_known_one_follow_one_at_a_time_until_the_caller_stops():
    api = Pages(count=23)
    assert tail(api, known_last=3, stop_at=2) == [5, 4, 3, 2]  # records deleted before: the new moved back
    assert sorted(api.requested) == [2, 3, 4, 5]
    assert tail(Pages(count=23), known_last=3) == [5, 4, 3, 2, 1]  # to the first page at most


def test_nothing_new_costs_one_request():
    api = Pages(count=15)
    assert tail(api, known_last=3, stop_at=3) == [3]
    assert api.requested == [3]


def test_a_list_that_shrank_is_read_from_its_last_page_now():
    api = Pages(count=12)  # 3 pages now; the last read ended on page 5
    assert tail(api, known_last=5) == [3, 2, 1]
    assert api.requested == [5, 3, 2, 1]


def test_a_server_counting_from_zero():
    api = Pages(count=23, first=0)  # pages 0 .. 4
    assert tail(api, known_last=2, first=0, stop_at=2) == [4, 3, 2]
    assert tail(Pages(count=23, first=0), known_last=2, first=0) == [4, 3, 2, 1, 0]


def test_a_server_that_announces_no_size_is_walked_forward_to_its_short_page():
    api = Pages(count=23, announce=False)
    assert tail(api, known_last=3, stop_at=3) == [5, 4, 3]
    assert api.requested == [3, 4, 5]  # page 5 is short: the end


def test_the_new_pages_are_in_flight_together():
    api = Pages(count=33, together=(7, 6, 5))  # each waits until all three are asked
    assert tail(api, known_last=4, stop_at=4, pages_ahead=3) == [7, 6, 5, 4]


def test_an_answer_for_another_page_stops_the_read():
    with pytest.raises(PagingLoopError, match="asked for page 3, got page 4"):
        tail(Pages(count=23, shift=1), known_last=3)


@pytest.mark.parametrize("status", [400, 404])
def test_a_server_that_refuses_a_page_past_its_end_is_read_from_its_first_page(status):
    api = Pages(count=12, past_end=status)  # 3 pages now; the last read ended on page 5
    assert tail(api, known_last=5) == [3, 2, 1]
    assert api.requested == [5, 1, 3, 2]  # the first page said the size; it is yielded in its place
