"""What the client sends: methods, paths, queries, headers and bodies, exactly; what it refuses to send."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, date, datetime, timedelta, timezone

import httpx
import pendulum
import pytest

from sources.platform_client.client import PlatformClient, format_query_value, total_stats
from sources.platform_client.errors import ConfigurationError


def ok(json=None, status=200):
    return lambda request: httpx.Response(status, json={} if json is None else json)


def test_request_sends_method_path_query_and_headers(make_client):
    client, api = make_client(ok({"id": "s1"}))
    assert client.request("sale_details", path_params={"id": "s1"}) == {"id": "s1"}
    [seen] = api.seen
    assert (seen.method, seen.path, seen.query) == ("GET", "/store/v1/sales/s1", {})
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["authorization"] == "Bearer <TOKEN>"
    assert seen.headers["user-agent"].startswith("platform-sync/")
    assert seen.body is None


def test_query_values_are_formatted_as_the_api_wants(make_client):
    client, api = make_client(ok({"items": []}))
    client.request(
        "top_commented_posts",
        path_params={"communityId": 42},
        params={
            "days": 30,
            "since": datetime(2026, 5, 1, 12, 30, tzinfo=timezone(timedelta(hours=-3))),
            "naive": datetime(2026, 5, 1, 0, 0, 0, 250000),  # noqa: DTZ001  # naive is read as UTC
            "day": date(2026, 5, 1),
            "flag": False,
            "skipped": None,
        },
    )
    assert api.seen[0].path == "/community/v1/posts/community/42/top/commented"
    assert api.seen[0].query == {
        "days": "30",
        "since": "2026-05-01T15:30:00Z",
        "naive": "2026-05-01T00:00:00.250Z",
        "day": "2026-05-01T00:00:00Z",
        "flag": "false",
    }


def test_format_query_value_accepts_pendulum_and_lists():
    assert (
        format_query_value(pendulum.datetime(2026, 1, 2, 3, 4, 5, tz="America/Sao_Paulo"))
        == "2026-01-02T06:04:05Z"
    )
    assert format_query_value(["a", True, datetime(2026, 1, 1, tzinfo=UTC)]) == [
        "a",
        "true",
        "2026-01-01T00:00:00Z",
    ]


def test_post_sends_json_body_and_accepts_201(make_client):
    client, api = make_client(ok({"id": "cart-1"}, status=201))
    body = {"orderId": "o-1", "postbackUrl": "https://example.test/hook", "items": []}
    assert client.request("create_cart", json=body) == {"id": "cart-1"}
    [seen] = api.seen
    assert (seen.method, seen.path, seen.body) == ("POST", "/checkout/v1/cart", body)
    assert seen.headers["content-type"] == "application/json"


def test_webhook_origins_accepts_both_documented_and_usual_success(make_client):
    client, _ = make_client(ok([{"id": "o1"}], status=201))
    assert client.request("list_webhook_origins") == [{"id": "o1"}]


def test_paginate_sends_page_and_items_per_page_and_caller_params(make_client, paged):
    items = [{"id": i} for i in range(5)]
    client, api = make_client(paged(items), items_per_page=2)
    pages = list(client.paginate("list_attendees", path_params={"id": "ev-1"}, params={"order": "asc"}))
    assert [p.items for p in pages] == [items[0:2], items[2:4], items[4:5]]
    assert api.calls == [
        (
            "GET",
            "/events/v1/attendance-list/by-event/ev-1",
            {"order": "asc", "page": "1", "itemsPerPage": "2"},
        ),
        (
            "GET",
            "/events/v1/attendance-list/by-event/ev-1",
            {"order": "asc", "page": "2", "itemsPerPage": "2"},
        ),
        (
            "GET",
            "/events/v1/attendance-list/by-event/ev-1",
            {"order": "asc", "page": "3", "itemsPerPage": "2"},
        ),
    ]


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda c: c.request("nope"), "unknown operation 'nope'"),
        (lambda c: c.request("token_exchange"), "exchange_code"),
        (lambda c: c.request("sale_details"), "missing or empty"),
        (lambda c: c.request("list_lesson_comments"), "requires itemsPerPage, page"),
        (lambda c: list(c.paginate("sale_details", {"id": 1})), "not a paged list"),
        (lambda c: list(c.paginate("list_products", params={"page": 3})), "set by the client"),
        (lambda c: list(c.paginate("list_fiscal_documents", params={"startDate": "2026-01-01"})), "endDate"),
    ],
)
def test_refused_before_sending(make_client, call, fragment):
    client, api = make_client(ok())
    with pytest.raises(ConfigurationError, match=fragment):
        call(client)
    assert api.seen == []


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"access_token": " "}, "access_token is empty.*platform-sync auth --code"),
        ({"base_url": "ftp://x"}, "base_url must be an http"),
        ({"items_per_page": 0}, "items_per_page"),
        ({"max_retries": 0}, "max_retries"),
        ({"rate_limit_time_scale": 0}, "rate_limit_time_scale"),
        ({"rate_limits": {"sales": 10}}, "unknown operation name.*'sales'.*sale_details"),
        ({"rate_limits": {"sale_details": -1}}, "positive"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_configuration_errors(kwargs, fragment, base_url, token):
    options = {"base_url": base_url, "access_token": token, **kwargs}
    with pytest.raises(ConfigurationError, match=fragment):
        PlatformClient(options.pop("base_url"), options.pop("access_token"), **options)


def test_repr_hides_the_token(base_url, token):
    with PlatformClient(base_url, token) as client:
        assert token not in repr(client)
        assert token not in repr(client._http.auth)


def test_paginate_streams_one_page_per_next(make_client, paged):
    client, api = make_client(paged([{"id": i} for i in range(30)]), items_per_page=10)
    pages = client.paginate("list_products")
    assert api.seen == []  # nothing is fetched before iteration starts
    next(pages)
    assert len(api.seen) == 1
    next(pages)
    assert len(api.seen) == 2


def test_debug_line_per_request_with_operation_url_status_and_time(make_client, caplog, base_url):
    client, _ = make_client(ok({"id": 1}))
    with caplog.at_level(logging.DEBUG, logger="platform_sync.client"):
        client.request("subscription_details", path_params={"id": "sub-9"})
    [record] = [r for r in caplog.records if r.name == "platform_sync.client"]
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith(
        f"subscription_details GET {base_url}/store/v1/subscriptions/sub-9 -> 200 in "
    )


def test_stats_count_requests_per_operation(make_client, paged):
    client, _ = make_client(paged([{"id": i} for i in range(25)]), items_per_page=10)
    list(client.paginate("list_products"))
    client.request("list_webhook_origins")
    stats = client.stats
    assert stats["list_products"].requests == 3
    assert stats["list_webhook_origins"].requests == 1
    assert total_stats(stats).requests == 4
    assert total_stats(stats).errors == 0


def test_one_client_shared_by_many_threads(make_client, paged):
    """Eight threads page through their own lists on one client: every page arrives, counts add up."""
    lists = {f"ev-{n}": [{"id": f"{n}-{i}"} for i in range(37)] for n in range(8)}

    def handle(request: httpx.Request) -> httpx.Response:
        event = request.url.path.rsplit("/", 1)[-1]
        return paged(lists[event])(request)

    client, api = make_client(handle, items_per_page=5, rate_limits={"list_attendees": 10_000})
    results: dict[str, list[dict[str, str]]] = {}
    errors: list[BaseException] = []

    def read(event: str) -> None:
        try:
            results[event] = [i for p in client.paginate("list_attendees", {"id": event}) for i in p.items]
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(event,)) for event in lists]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert results == lists
    assert client.stats["list_attendees"].requests == 8 * 8 == len(api.seen)
