"""Rate limits (spec part 8, contracts part 1): token buckets per token and operation."""

from __future__ import annotations

import time

import httpx
import pytest

from sandbox.running import running_sandbox
from tests.support.fake_world import EVENT_ID, FakeWorld
from tests.support.sandbox_api import assert_error

LIMITS = {
    "/store/v1/sales/SALE001": 30,
    f"/events/v1/events/{EVENT_ID}": 30,
    f"/events/v1/attendance-list/by-event/{EVENT_ID}": 30,
    "/course/v1/comments?page=1&itemsPerPage=1": 200,
    "/store/v1/products": 600,
    "/webhook/v1/origin": 600,
}


def client_for(sandbox, token=None):
    token = token or sandbox.token()
    return httpx.Client(base_url=sandbox.base_url, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture(scope="module")
def slow_sandbox():
    """time scale 0.2: 30 a minute becomes 30 in five minutes, one request back every 10 s, so a burst's
    outcome is exact even on a slow machine (at time scale 1, one every 2 s, 31 requests of a loaded
    CI machine could span a refill)."""
    with running_sandbox(world=FakeWorld(), time_scale=0.2) as sandbox:
        yield sandbox


@pytest.mark.parametrize("path", sorted(LIMITS))
def test_every_answer_carries_the_limit_headers(slow_sandbox, path):
    with client_for(slow_sandbox) as client:
        response = client.get(path)
    assert response.status_code in (200, 201)
    assert response.headers["X-RateLimit-Limit"] == str(LIMITS[path])
    assert response.headers["X-RateLimit-Remaining"] == str(LIMITS[path] - 1)


def test_a_burst_past_the_limit_gets_429_with_retry_after(slow_sandbox):
    with client_for(slow_sandbox) as client:
        answers = [client.get("/store/v1/sales/SALE001") for _ in range(31)]
    assert [a.status_code for a in answers[:30]] == [200] * 30
    assert [int(a.headers["X-RateLimit-Remaining"]) for a in answers[:30]] == list(range(29, -1, -1))
    limited = answers[30]
    assert_error(limited, 429, "rate_limited")
    assert limited.headers["Retry-After"].isdigit() and 1 <= int(limited.headers["Retry-After"]) <= 10
    assert limited.headers["X-RateLimit-Limit"] == "30"
    assert limited.headers["X-RateLimit-Remaining"] == "0"


def test_buckets_are_per_token_and_per_operation(slow_sandbox):
    with client_for(slow_sandbox) as client:
        for _ in range(30):
            client.get(f"/events/v1/events/{EVENT_ID}")
        assert client.get(f"/events/v1/events/{EVENT_ID}").status_code == 429
        assert client.get(f"/events/v1/attendance-list/by-event/{EVENT_ID}").status_code == 200
    with client_for(slow_sandbox) as other:
        assert other.get(f"/events/v1/events/{EVENT_ID}").status_code == 200


def test_the_bucket_refills_at_the_scaled_rate():
    # 3 per second: a burst of 60 meets the limit even on a slow, loaded machine (it would need 60
    # requests spread over more than 10 s to escape it; at 30 a second, 1 s was within a slow CI
    # machine's reach); 0.5 s later about 1.5 requests are back.
    with running_sandbox(world=FakeWorld(), time_scale=6) as sandbox, client_for(sandbox) as client:
        statuses = [client.get("/store/v1/sales/SALE001").status_code for _ in range(60)]
        assert 429 in statuses
        limited = client.get("/store/v1/sales/SALE001")
        if limited.status_code == 429:  # the scaled window may already have refilled one request
            assert int(limited.headers["Retry-After"]) >= 1
        time.sleep(0.5)
        assert client.get("/store/v1/sales/SALE001").status_code == 200


def test_add_attendee_is_limited_too(slow_sandbox):
    body = {
        "eventId": EVENT_ID,
        "ticketId": "nope",
        "name": "x",
        "document": "1",
        "documentType": "cpf",
        "email": "e",
    }
    with client_for(slow_sandbox) as client:
        statuses = [
            client.post("/events/v1/attendance-list/add-manually", json=body).status_code for _ in range(31)
        ]
    assert statuses == [404] * 30 + [429]


def test_rate_limits_off():
    with running_sandbox(world=FakeWorld(), rate_limits=False) as sandbox, client_for(sandbox) as client:
        answers = [client.get("/store/v1/sales/SALE001") for _ in range(45)]
    assert {a.status_code for a in answers} == {200}
    assert "X-RateLimit-Limit" not in answers[0].headers


def test_sandbox_routes_and_token_exchange_are_never_limited(slow_sandbox):
    with httpx.Client(base_url=slow_sandbox.base_url) as client:
        for _ in range(40):
            response = client.get("/sandbox/stats")
            assert response.status_code == 200 and "X-RateLimit-Limit" not in response.headers
    for _ in range(3):
        assert slow_sandbox.token()
