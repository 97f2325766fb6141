"""Paging (contracts part 1): 1- and 0-based servers, clamped sizes, empty pages, broken envelopes, loops."""

from __future__ import annotations

import httpx
import pytest

from sources.platform_client.errors import MalformedResponseError, PagingLoopError
from sources.platform_client.paging import UNKNOWN, Page, parse_envelope

ITEMS = [{"id": i} for i in range(23)]


def requested(api):
    return [(s.page, int(s.query["itemsPerPage"])) for s in api.seen]


def flat(pages):
    return [item for page in pages for item in page.items]


def test_one_based_server_is_followed_to_the_last_page(make_client, paged):
    client, api = make_client(paged(ITEMS), items_per_page=10)
    pages = list(client.paginate("list_products"))
    assert requested(api) == [(1, 10), (2, 10), (3, 10)]
    assert [(p.page, p.pages, p.total_items, p.items_per_page, len(p.items)) for p in pages] == [
        (1, 3, 23, 10, 10),
        (2, 3, 23, 10, 10),
        (3, 3, 23, 10, 3),
    ]
    assert flat(pages) == ITEMS


def test_clamped_page_size_is_taken_from_the_envelope(make_client, paged):
    """Asked for 500, the server clamps to 100 and says so; `pages` is computed with 100."""
    items = [{"id": i} for i in range(250)]
    client, api = make_client(paged(items, max_size=100), items_per_page=500)
    pages = list(client.paginate("list_transfers"))
    assert requested(api) == [(1, 500), (2, 500), (3, 500)]
    assert [p.items_per_page for p in pages] == [100, 100, 100]
    assert flat(pages) == items


def test_server_ignoring_items_per_page_uses_its_default(make_client):
    items = [{"id": i} for i in range(25)]

    def ignores_size(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        return httpx.Response(
            200,
            json={
                "page": page,
                "pages": 3,
                "itemsPerPage": 10,
                "totalItems": 25,
                "items": items[(page - 1) * 10 :][:10],
            },
        )

    client, api = make_client(ignores_size, items_per_page=100)
    assert flat(client.paginate("list_subscriptions")) == items
    assert [s.page for s in api.seen] == [1, 2, 3]


def test_empty_list_takes_one_request(make_client, paged):
    client, api = make_client(paged([]))
    assert list(client.paginate("list_affiliations")) == []
    assert requested(api) == [(1, 100)]


def test_empty_page_stops_even_if_pages_says_more(make_client, script, page_of):
    """A page past the end (items deleted while paging) answers `items: []`: the walk ends there."""
    client, api = make_client(
        script(
            httpx.Response(200, json=page_of([{"id": 1}], 1, 3, 1, 3)),
            httpx.Response(200, json=page_of([], 2, 3, 1, 3)),
        ),
        items_per_page=1,
    )
    assert flat(client.paginate("list_products")) == [{"id": 1}]
    assert [s.page for s in api.seen] == [1, 2]


def test_envelope_page_zero_means_a_zero_based_server(make_client, script, page_of):
    """Contracts part 1: a first answer numbered 0 → continue with 1, 2, ... up to `pages - 1`."""
    client, api = make_client(
        script(
            httpx.Response(200, json=page_of([{"id": 0}], 0, 3, 1, 3)),
            httpx.Response(200, json=page_of([{"id": 1}], 1, 3, 1, 3)),
            httpx.Response(200, json=page_of([{"id": 2}], 2, 3, 1, 3)),
        ),
        items_per_page=1,
    )
    pages = list(client.paginate("list_products"))
    assert [s.page for s in api.seen] == [1, 1, 2]
    assert [p.page for p in pages] == [0, 1, 2]
    assert flat(pages) == [{"id": 0}, {"id": 1}, {"id": 2}]


def test_zero_based_server_answering_page_1_with_its_second_page(make_client, paged):
    """A server counting from 0 answers `page=1` with its second page; the missed page 0 is detected when
    page `pages` comes back empty, and fetched once at the end."""
    client, api = make_client(paged(ITEMS, first_page=0), items_per_page=10)
    pages = list(client.paginate("list_products"))
    assert [s.page for s in api.seen] == [1, 2, 3, 0]
    assert [p.page for p in pages] == [1, 2, 0]
    assert sorted(flat(pages), key=lambda item: item["id"]) == ITEMS


def test_page_zero_probe_refused_ends_the_walk_quietly(make_client, script, page_of, caplog):
    client, api = make_client(
        script(
            httpx.Response(200, json=page_of([{"id": 1}], 1, 2, 1, 2)),
            httpx.Response(200, json=page_of([], 2, 2, 1, 2)),
            httpx.Response(
                422, json={"status": 422, "error": "validation_error", "message": "page must be >= 1"}
            ),
        ),
        items_per_page=1,
    )
    assert flat(client.paginate("list_products")) == [{"id": 1}]
    assert [s.page for s in api.seen] == [1, 2, 0]
    assert "refused page 0" in caplog.text


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ([], "expected a JSON object, got list"),
        ({"page": 1, "pages": 1, "itemsPerPage": 10, "totalItems": 0}, "missing items"),
        ({"page": 1, "pages": 1, "itemsPerPage": 10, "totalItems": 1, "items": {"id": 1}}, "items is a dict"),
        ({"page": 1, "pages": 1, "itemsPerPage": 10, "totalItems": 1, "items": [1]}, r"items\[0\] is a int"),
    ],
)
def test_parse_envelope_rejects(body, problem):
    with pytest.raises(
        MalformedResponseError, match=f"list_products: page 4 is not a paged envelope: {problem}"
    ):
        parse_envelope(body, operation="list_products", requested_page=4)


@pytest.mark.parametrize(
    ("body", "read"),
    [
        # issue 48: the envelope as tolerant as the records; what was refused before is read
        (
            {"page": "1", "pages": "2", "itemsPerPage": " 10 ", "totalItems": "11", "items": []},
            (1, 2, 11, 10),
        ),
        ({"page": 1, "pages": 1, "itemsPerPage": 10, "items": []}, (1, 1, UNKNOWN, 10)),
        ({"page": 1, "pages": True, "itemsPerPage": 10, "totalItems": 0, "items": []}, (1, UNKNOWN, 0, 10)),
        ({"page": 1, "pages": 1, "itemsPerPage": -1, "totalItems": 0, "items": []}, (1, 1, 0, UNKNOWN)),
        ({"items": [], "nextPage": "/store/v1/products?page=5"}, (4, UNKNOWN, UNKNOWN, UNKNOWN)),
        ({"page": None, "pages": "x", "itemsPerPage": 2.5, "totalItems": {}, "items": []}, (4, -1, -1, -1)),
        # a `pages` smaller than `totalItems` needs is raised to it
        ({"page": 1, "pages": 1, "itemsPerPage": 10, "totalItems": 25, "items": []}, (1, 3, 25, 10)),
    ],
)
def test_parse_envelope_reads_loose_numbers(body, read):
    page = parse_envelope(body, operation="list_products", requested_page=4)
    assert (page.page, page.pages, page.total_items, page.items_per_page) == read


def _loose(items: list[dict], page: int, size: int, **announced: object) -> httpx.Response:
    return httpx.Response(
        200, json={"items": items, "page": str(page), "itemsPerPage": str(size), **announced}
    )


def test_a_list_that_announces_no_count_is_walked_while_its_pages_come_full(make_client, script):
    client, api = make_client(
        script(
            _loose([{"id": 1}, {"id": 2}], 1, 2, nextPage="?page=2"),
            _loose([{"id": 3}, {"id": 4}], 2, 2),
            _loose([{"id": 5}], 3, 2),  # short: the last
        ),
        items_per_page=2,
    )
    assert flat(client.paginate("list_products")) == [{"id": i} for i in range(1, 6)]
    assert [s.page for s in api.seen] == [1, 2, 3]


def test_a_list_whose_pages_come_full_to_the_end_stops_at_an_empty_page(make_client, script):
    client, api = make_client(
        script(
            _loose([{"id": 1}, {"id": 2}], 1, 2, pages="2", totalItems="4"),
            _loose([{"id": 3}, {"id": 4}], 2, 2),  # pages and totalItems left out
            _loose([], 3, 2),
        ),
        items_per_page=2,
    )
    # page 1 announced 2 pages: the walk ends there, without asking for a third
    assert flat(client.paginate("list_products")) == [{"id": i} for i in range(1, 5)]
    assert [s.page for s in api.seen] == [1, 2]


def test_a_list_with_no_size_nor_count_ends_at_its_short_page(make_client, script):
    client, api = make_client(
        script(
            httpx.Response(200, json={"items": [{"id": 1}, {"id": 2}]}),
            httpx.Response(200, json={"items": [{"id": 3}, {"id": 4}]}),
            httpx.Response(200, json={"items": []}),
        ),
        items_per_page=2,
    )
    assert flat(client.paginate("list_products")) == [{"id": i} for i in range(1, 5)]
    assert [s.page for s in api.seen] == [1, 2, 3]


def test_parse_envelope_accepts_whole_floats():
    body = {"page": 1.0, "pages": 2.0, "itemsPerPage": 10.0, "totalItems": 11.0, "items": [{"a": 1}]}
    assert parse_envelope(body, operation="x", requested_page=1) == Page([{"a": 1}], 1, 2, 11, 10)


def test_malformed_page_is_retried_then_recovered(make_client, script, page_of, clock):
    good = page_of([{"id": 1}], 1, 1, 10, 1)
    client, api = make_client(
        script(
            httpx.Response(200, content=b'{"page": 1, "pages": 1, "itemsPe'),  # truncated body
            httpx.Response(200, json={"page": 1, "items": "oops"}),
            httpx.Response(200, json=good),
        )
    )
    assert flat(client.paginate("list_products")) == [{"id": 1}]
    assert [s.page for s in api.seen] == [1, 1, 1]
    assert client.stats["list_products"].retries == 2
    assert len([s for s in clock.sleeps if s > 0]) == 2  # backoff between tries


def test_malformed_page_for_ever_gives_up_naming_operation_page_and_tries(make_client, paged, page_of):
    good = paged([{"id": i} for i in range(3)])

    def second_page_broken(request: httpx.Request) -> httpx.Response:
        if request.url.params["page"] == "2":
            return httpx.Response(200, content=b"<html>Bad Gateway</html>")
        return good(request)

    client, api = make_client(second_page_broken, items_per_page=1, max_retries=4)
    pages = client.paginate("list_products")
    assert next(pages).items == [{"id": 0}]
    with pytest.raises(MalformedResponseError) as caught:
        next(pages)
    error = caught.value
    assert (error.operation, error.page, error.attempts) == ("list_products", 2, 4)
    assert "list_products: page 2" in str(error) and "after 4 tries" in str(error)
    assert [s.page for s in api.seen] == [1, 2, 2, 2, 2]


def test_server_ignoring_page_is_a_loop_not_retried(make_client, page_of):
    always_first = lambda request: httpx.Response(200, json=page_of([{"id": 1}], 1, 5, 1, 5))  # noqa: E731
    client, api = make_client(always_first, items_per_page=1)
    with pytest.raises(PagingLoopError, match="asked for page 2, got page 1"):
        list(client.paginate("list_products"))
    assert len(api.seen) == 2
    stats = client.stats["list_products"]
    assert (stats.requests, stats.retries, stats.errors) == (2, 0, 1)


def test_same_items_under_a_new_page_number_is_a_loop(make_client):
    def same_items(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        return httpx.Response(
            200, json={"page": page, "pages": 9, "itemsPerPage": 1, "totalItems": 9, "items": [{"id": 1}]}
        )

    client, api = make_client(same_items, items_per_page=1)
    with pytest.raises(PagingLoopError, match="page 2 repeats the items of page 1"):
        list(client.paginate("list_products"))
    assert len(api.seen) == 2


def test_first_answer_with_an_unexpected_page_number_is_refused(make_client, page_of):
    client, _ = make_client(lambda request: httpx.Response(200, json=page_of([{"id": 1}], 7, 9, 1, 9)))
    with pytest.raises(PagingLoopError, match="asked for page 1, got page 7"):
        list(client.paginate("list_products"))


def test_growing_list_is_followed_by_the_latest_pages_count(make_client, script, page_of):
    """`pages` is re-read on every answer: items added while paging are not cut off."""
    client, api = make_client(
        script(
            httpx.Response(200, json=page_of([{"id": 1}], 1, 2, 1, 2)),
            httpx.Response(200, json=page_of([{"id": 2}], 2, 3, 1, 3)),
            httpx.Response(200, json=page_of([{"id": 3}], 3, 3, 1, 3)),
        ),
        items_per_page=1,
    )
    assert flat(client.paginate("list_products")) == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert len(api.seen) == 3


def test_a_page_only_pythons_own_parser_takes_is_read_not_called_malformed(make_client):
    """Pages are parsed with orjson, which refuses integers beyond 64 bits and NaN: those pages are
    parsed again with the standard library instead of being retried as malformed."""
    body = b'{"page": 1, "pages": 1, "itemsPerPage": 10, "totalItems": 2, "items": [{"id": 36893488147419103232}, {"id": 2, "ratio": NaN}]}'  # noqa: E501

    client, api = make_client(lambda request: httpx.Response(200, content=body), items_per_page=10)
    [page] = list(client.paginate("list_products"))
    assert page.items[0] == {"id": 2**65}
    assert page.items[1]["id"] == 2 and page.items[1]["ratio"] != page.items[1]["ratio"]  # NaN
    assert len(api.seen) == 1
