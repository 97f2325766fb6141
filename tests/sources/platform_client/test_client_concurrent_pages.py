"""Pages fetched concurrently (issue 27): once a list's first page says how many pages there are, the
next ones are in flight together, bounded per walk and in total; the caller gets the same pages, rows and
requests as from a sequential walk, in page order, and a failing page is retried or reported as before."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import ServerError

ITEMS = [{"id": i} for i in range(95)]


def envelope(items, page: int, pages: int, per_page: int, total: int) -> dict:
    return {"page": page, "pages": pages, "itemsPerPage": per_page, "totalItems": total, "items": items}


class SlowPages:
    """A paged list (as the sandbox serves it) answering each request after `delay` real seconds; it
    records the requests in flight at once."""

    def __init__(self, items, delay: float, fail: dict[int, int] | None = None) -> None:
        self.items, self.delay = items, delay
        self.fail = dict(fail or {})  # page -> how many times to answer 503 first
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.requested: list[int] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        size = int(request.url.params["itemsPerPage"])
        with self.lock:
            self.requested.append(page)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            failing = self.fail.get(page, 0)
            if failing:
                self.fail[page] = failing - 1
        time.sleep(self.delay)
        with self.lock:
            self.in_flight -= 1
        if failing:
            return httpx.Response(503, json={"message": "unavailable"})
        chunk = self.items[(page - 1) * size : page * size]
        pages = -(-len(self.items) // size)
        return httpx.Response(200, json=envelope(chunk, page, pages, size, len(self.items)))


def client_on(handler, **options) -> PlatformClient:
    options.setdefault("backoff_base", 0.0)
    transport = httpx.MockTransport(handler)
    return PlatformClient("https://api.platform.test", "tok", transport=transport, **options)


def walk(client: PlatformClient, operation: str = "list_products"):
    return list(client.paginate(operation))


def test_concurrent_pages_give_the_same_pages_rows_and_requests_as_a_sequential_walk():
    sequential_api, concurrent_api = SlowPages(ITEMS, 0.01), SlowPages(ITEMS, 0.05)
    with client_on(sequential_api, items_per_page=5, pages_ahead=1, pages_ahead_total=1) as sequential:
        one_by_one = walk(sequential)
    with client_on(concurrent_api, items_per_page=5, pages_ahead=8) as concurrent:
        together = walk(concurrent)
        stats = concurrent.stats["list_products"]
    assert [page.page for page in together] == [page.page for page in one_by_one] == list(range(1, 20))
    assert [page.items for page in together] == [page.items for page in one_by_one]
    assert [item for page in together for item in page.items] == ITEMS
    assert sorted(concurrent_api.requested) == sequential_api.requested == list(range(1, 20))
    assert (stats.requests, stats.retries, stats.errors) == (19, 0, 0)
    assert sequential_api.most_in_flight == 1
    # 8 ahead, then more as answers come (`list_products` has no known limit: probed, up to the pool's 16);
    # timing decides how many overlap
    assert 4 < concurrent_api.most_in_flight <= 16


def test_pages_in_flight_are_bounded_in_total_across_walks():
    api = SlowPages(ITEMS, 0.02)
    with client_on(api, items_per_page=5, pages_ahead=8, pages_ahead_total=4) as client:
        results: list[list] = []
        threads = [threading.Thread(target=lambda: results.append(walk(client))) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert [[item for page in pages for item in page.items] for pages in results] == [ITEMS] * 3
    # 4 pool threads, plus the page each of the 3 walks fetches in its own thread when nothing is ahead
    assert api.most_in_flight <= 4 + 3
    assert sorted(api.requested) == sorted(list(range(1, 20)) * 3)


def test_a_failing_page_of_a_concurrent_walk_is_retried():
    api = SlowPages(ITEMS, 0.005, fail={7: 2})
    with client_on(api, items_per_page=5) as client:
        pages = walk(client)
        stats = client.stats["list_products"]
    assert [item for page in pages for item in page.items] == ITEMS
    assert (stats.requests, stats.retries) == (21, 2)
    assert api.requested.count(7) == 3


def test_a_page_failing_for_ever_is_reported_after_the_pages_before_it():
    api = SlowPages(ITEMS, 0.005, fail={7: 100})
    taken: list[int] = []
    with client_on(api, items_per_page=5, max_retries=2) as client:
        with pytest.raises(ServerError, match="list_products"):
            for page in client.paginate("list_products"):
                taken.append(page.page)
    assert taken == [1, 2, 3, 4, 5, 6]


def test_a_caller_that_stops_early_leaves_at_most_the_pages_ahead_fetched():
    api = SlowPages(ITEMS, 0.005)
    with client_on(api, items_per_page=5, pages_ahead=4) as client:
        pages = client.paginate("list_products")
        first = [next(pages).page for _ in range(3)]
        pages.close()  # type: ignore[attr-defined]
        time.sleep(0.1)
    assert first == [1, 2, 3]
    assert max(api.requested) <= 3 + 4


def test_an_empty_page_still_ends_a_concurrent_walk():
    """Items deleted while paging: the pages past the new end are empty, and the walk stops there."""
    items = ITEMS[:40]

    def shrinking(request: httpx.Request) -> httpx.Response:
        page, size = int(request.url.params["page"]), int(request.url.params["itemsPerPage"])
        chunk = items[(page - 1) * size : page * size] if page <= 4 else []
        body = {"page": page, "pages": 19, "itemsPerPage": size, "totalItems": 95, "items": chunk}
        return httpx.Response(200, json=body)

    with client_on(shrinking, items_per_page=5) as client:
        pages = walk(client)
    assert [item for page in pages for item in page.items] == items[:20]


class MovingList:
    """A list ordered by update: when page 2 is first asked for, the first `moves` records move to the end
    (their update), once per walk for `walks_moving` walks; a walk starts at each request of page 1."""

    def __init__(self, items, walks_moving: int = 1, moves: int = 1) -> None:
        self.order = list(items)
        self.walks_moving, self.moves = walks_moving, moves
        self.walks = 0
        self.moved_this_walk = False
        self.requested: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        page, size = int(request.url.params["page"]), int(request.url.params["itemsPerPage"])
        with self.lock:
            self.requested.append(page)
            if page == 1:
                self.walks += 1
                self.moved_this_walk = False
            elif not self.moved_this_walk and self.walks <= self.walks_moving:
                self.moved_this_walk = True
                self.order = self.order[self.moves :] + self.order[: self.moves]
            chunk = self.order[(page - 1) * size : page * size]
        pages = -(-len(self.order) // size)
        return httpx.Response(200, json=envelope(chunk, page, pages, size, len(self.order)))


def test_a_list_that_moves_under_the_walk_is_walked_again_and_nothing_is_skipped():
    api = MovingList(ITEMS[:40])
    with client_on(api, items_per_page=5) as client:
        pages = walk(client, "list_subscriptions")
    seen = [item["id"] for page in pages for item in page.items]
    # The first walk missed record 5 (shifted onto page 1 after it was read) and read record 0 twice.
    first_walk = seen[:40]
    assert 5 not in first_walk and first_walk.count(0) == 2
    assert set(seen[40:]) == set(range(40)) and len(seen) == 80
    assert sorted(api.requested) == sorted(list(range(1, 9)) * 2)


def test_a_list_that_keeps_moving_fails_the_walk_naming_it():
    from sources.platform_client.errors import ListMovedError

    api = MovingList(ITEMS[:40], walks_moving=10)
    with client_on(api, items_per_page=5) as client:
        with pytest.raises(ListMovedError, match="list_subscriptions: the list kept moving .* 3 walks"):
            walk(client, "list_subscriptions")
    assert sorted(api.requested) == sorted(list(range(1, 9)) * 3)
