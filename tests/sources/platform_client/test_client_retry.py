"""The retry policy: what is retried, how often, how long it waits, and what is raised in the end."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime

import httpx
import pytest

from sources.platform_client.errors import (
    NotFoundError,
    OperationDeferredError,
    RateLimitedError,
    ServerError,
    TransportError,
    ValidationError,
)
from sources.platform_client.retry import Failure, FailureKind, RetryPolicy, parse_retry_after

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)


def status(code, headers=None, json=None):
    return httpx.Response(code, headers=headers or {}, json=json if json is not None else {"status": code})


@pytest.mark.parametrize("code", [500, 502, 503, 504])
def test_server_errors_are_retried_until_success(make_client, script, code):
    client, api = make_client(script(status(code), status(code), httpx.Response(200, json={"id": "s"})))
    assert client.request("sale_details", {"id": "s"}) == {"id": "s"}
    assert len(api.seen) == 3
    stats = client.stats["sale_details"]
    assert (stats.requests, stats.retries, stats.errors) == (3, 2, 0)


@pytest.mark.parametrize(
    "exception",
    [
        httpx.ReadTimeout("timed out"),
        httpx.ConnectError("refused"),
        httpx.ConnectTimeout("slow"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.ReadError("reset by peer"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_transport_failures_are_retried(make_client, script, exception):
    client, api = make_client(script(exception, httpx.Response(200, json=[])))
    assert client.request("list_product_campaigns", {"id": "p1"}) == []
    assert len(api.seen) == 2


@pytest.mark.parametrize("code", [400, 401, 403, 404, 405, 409, 422])
def test_other_4xx_are_not_retried(make_client, script, code):
    client, api = make_client(script(status(code)))
    with pytest.raises(Exception) as caught:
        client.request("subscription_details", {"id": "x"})
    assert getattr(caught.value, "status", None) == code
    assert len(api.seen) == 1
    assert client.stats["subscription_details"].errors == 1


def test_gives_up_after_max_retries_tries_with_a_clear_error(make_client, clock):
    client, api = make_client(lambda r: status(503, json={"message": "down for maintenance"}), max_retries=4)
    with pytest.raises(ServerError) as caught:
        client.request("list_webhook_origins")
    assert len(api.seen) == 4
    message = str(caught.value)
    assert message.startswith(
        "list_webhook_origins: the API failed after 4 tries, last with 503: down for maintenance"
    )
    assert "run again later" in message and "max_retries" in message
    assert caught.value.attempts == 4
    stats = client.stats["list_webhook_origins"]
    assert (stats.requests, stats.retries, stats.errors) == (4, 3, 1)
    # full jitter: each wait within [0, 0.5 * 2**(n-1)]
    waits = [s for s in clock.sleeps if s > 0]
    assert len(waits) == 3 and all(0 <= w <= 0.5 * 2**n for n, w in enumerate(waits))
    assert stats.backoff_seconds == pytest.approx(sum(waits))


def test_transport_failure_for_ever_names_the_operation_and_what_to_do(make_client):
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    client, api = make_client(refuse, max_retries=3)
    with pytest.raises(TransportError) as caught:
        client.request("list_webhook_origins")
    assert len(api.seen) == 3
    assert (
        "list_webhook_origins: no answer from https://api.platform.test/webhook/v1/origin after 3 tries"
        in str(caught.value)
    )
    assert "ConnectError" in str(caught.value) and "base_url" in str(caught.value)
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


def test_retry_after_seconds_on_429_is_honoured(make_client, script, clock):
    client, api = make_client(
        script(status(429, {"Retry-After": "7"}), httpx.Response(200, json={"id": "e"})),
    )
    assert client.request("event_details", {"id": "e"}) == {"id": "e"}
    assert [s.at for s in api.seen] == [0.0, 7.0]
    stats = client.stats["event_details"]
    assert (stats.requests, stats.retries, stats.rate_limited) == (2, 1, 1)
    assert stats.rate_limit_wait_seconds == pytest.approx(7.0)


def test_retry_after_http_date_on_503(make_client, script, clock):
    # The fake clock's wall time starts at 2026-06-01T00:00:00Z.
    client, api = make_client(
        script(status(503, {"Retry-After": "Mon, 01 Jun 2026 00:00:12 GMT"}), httpx.Response(200, json={})),
    )
    client.request("list_webhook_origins")
    assert [s.at for s in api.seen] == [0.0, 12.0]


def test_retry_after_is_capped(make_client, script):
    client, api = make_client(
        script(status(503, {"Retry-After": "120"}), httpx.Response(200, json={})), max_retry_after=30
    )
    client.request("list_webhook_origins")
    assert [s.at for s in api.seen] == [0.0, 30.0]


@pytest.mark.parametrize("code", [429, 503])
def test_a_wait_beyond_the_patience_defers_the_operation_and_nothing_more_is_asked_of_it(
    make_client, code, caplog
):
    """Issue 48: one `Retry-After: 3600` must not hold the run. The request raises at once (no wait), the
    operation is asked nothing more in this client, one line says so, and the other operations go on."""

    def answer(request):
        if "/events/" in request.url.path:
            return status(code, {"Retry-After": "3600"})
        return httpx.Response(200, json={"id": "s"})

    client, api = make_client(answer, patience=300)
    with caplog.at_level(logging.WARNING, logger="platform_sync.client"):
        for _ in range(3):
            with pytest.raises(OperationDeferredError, match="wait 3,600 s.*patience of 300 s") as caught:
                client.request("event_details", {"id": "e1"})
            assert caught.value.operation == "event_details" and caught.value.wait == 3600
    assert client.request("sale_details", {"id": "s"}) == {"id": "s"}
    assert [s.at for s in api.seen] == [0.0, 0.0]  # no wait: the event once, then the sale
    assert client.deferred() == {"event_details": 3600}
    assert client.stats["event_details"].errors == 1
    lines = [r.getMessage() for r in caplog.records if "deferred to the next run" in r.getMessage()]
    assert len(lines) == 1


def test_a_wait_within_the_patience_is_waited(make_client, script):
    client, api = make_client(
        script(status(429, {"Retry-After": "200"}), httpx.Response(200, json={})),
        patience=300,
        max_retry_after=300,
    )
    client.request("list_webhook_origins")
    assert [s.at for s in api.seen] == [0.0, 200.0]
    assert client.deferred() == {}


def test_429_for_ever_raises_rate_limited_error(make_client):
    client, api = make_client(lambda r: status(429, {"Retry-After": "1"}), max_retries=3)
    with pytest.raises(RateLimitedError, match="still rate limited after 3 tries.*rate_limits"):
        client.request("list_products")
    assert len(api.seen) == 3
    assert client.stats["list_products"].rate_limited == 3


def test_post_is_not_repeated_when_the_server_may_have_applied_it(make_client, script):
    client, api = make_client(script(status(503)))
    with pytest.raises(ServerError, match="was not repeated because the server may have applied it"):
        client.request("add_attendee", json={"eventId": "e"})
    assert len(api.seen) == 1

    client, api = make_client(script(httpx.ReadTimeout("slow")))
    with pytest.raises(TransportError, match="may have applied it"):
        client.request("create_cart", json={})
    assert len(api.seen) == 1

    client, api = make_client(script(httpx.Response(201, content=b'{"id": "ca')))
    with pytest.raises(Exception, match="has applied it"):
        client.request("create_cart", json={})
    assert len(api.seen) == 1


def test_post_is_retried_when_the_server_certainly_did_not_act(make_client, script):
    client, api = make_client(
        script(
            status(429, {"Retry-After": "1"}),
            httpx.ConnectError("refused"),
            httpx.Response(201, json={"id": "a1"}),
        )
    )
    assert client.request("add_attendee", json={"eventId": "e"}) == {"id": "a1"}
    assert [s.method for s in api.seen] == ["POST", "POST", "POST"]


def test_retries_log_warnings(make_client, script, caplog):
    client, _ = make_client(script(status(502), httpx.Response(200, json={})))
    with caplog.at_level(logging.WARNING, logger="platform_sync.client"):
        client.request("list_webhook_origins")
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.getMessage().startswith("list_webhook_origins: answered 502")
    assert "(try 1 of 6); retrying in" in warning.getMessage()


def test_each_kind_of_failure_is_said_once_however_many_retries(make_client, caplog):
    """Issue 51: an API that cannot be reached printed 115 warnings for one cause. Each kind of failure
    (a refused connection, a 503...) warns at its first retry; the others go to debug, and are counted."""

    def answer(request):
        if "products" in request.url.path:
            raise httpx.ConnectError("refused")
        return status(503)

    client, api = make_client(answer, max_retries=3)
    with caplog.at_level(logging.DEBUG, logger="platform_sync.client"):
        for operation in ("list_products", "list_products", "list_webhook_origins"):
            with pytest.raises((TransportError, ServerError)):
                client.request(operation)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    retries = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(api.seen) == 9 and len(retries) == 6
    assert [w.split(":")[0] for w in warnings] == ["list_products", "list_webhook_origins"]
    assert all(
        w.endswith("(further retries after this kind of failure are logged at debug level)") for w in warnings
    )
    assert client.stats["list_products"].retries == 4


def test_validation_and_not_found_carry_no_retry(make_client, script):
    client, _ = make_client(script(status(404, json={"message": "Assinatura não encontrada"})))
    with pytest.raises(NotFoundError):
        client.request("subscription_details", {"id": "x"})
    client, _ = make_client(script(status(422)))
    with pytest.raises(ValidationError):
        client.request("subscription_details", {"id": "x"})


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 0 ", 0.0),
        ("1.5", 1.5),
        ("-4", 0.0),
        ("Mon, 01 Jun 2026 12:00:30 GMT", 30.0),
        ("Mon, 01 Jun 2026 11:00:00 GMT", 0.0),  # in the past
        ("soon", None),
        ("", None),
        ("nan", None),
        (None, None),
    ],
)
def test_parse_retry_after(value, seconds):
    assert parse_retry_after(value, NOW) == seconds


def test_policy_classification():
    policy = RetryPolicy(3)
    get, post = {"idempotent": True}, {"idempotent": False}
    for kind in (FailureKind.TIMEOUT, FailureKind.DROPPED, FailureKind.MALFORMED):
        assert policy.is_retryable(Failure(kind), **get) and not policy.is_retryable(Failure(kind), **post)
    assert policy.is_retryable(Failure(FailureKind.CONNECT), **post)
    assert not policy.is_retryable(Failure(FailureKind.INVALID), **get)
    assert policy.is_retryable(Failure(FailureKind.STATUS, 429), **post)
    assert not policy.is_retryable(Failure(FailureKind.STATUS, 400), **get)
    assert policy.should_retry(Failure(FailureKind.STATUS, 500), 2, **get)
    assert not policy.should_retry(Failure(FailureKind.STATUS, 500), 3, **get)


def test_backoff_is_full_jitter_capped():
    policy = RetryPolicy(10, backoff_base=1.0, backoff_cap=8.0, rng=random.Random(1))
    samples = {attempt: [policy.backoff(attempt) for _ in range(300)] for attempt in range(1, 8)}
    for attempt, values in samples.items():
        ceiling = min(8.0, 2 ** (attempt - 1))
        assert all(0 <= v <= ceiling for v in values)
        assert max(values) > 0.9 * ceiling  # spread over the whole range, not a fixed delay
        assert min(values) < 0.1 * ceiling
