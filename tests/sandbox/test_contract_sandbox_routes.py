"""Sandbox-only routes (contracts part 2): advance, catalog, stats."""

from __future__ import annotations

import httpx
import pytest

from sandbox.running import running_sandbox
from tests.support.fake_world import FakeWorld
from tests.support.sandbox_api import assert_error


@pytest.fixture
def sandbox():
    with running_sandbox(world=FakeWorld(), rate_limits=False) as sandbox:
        yield sandbox


def test_advance_moves_the_clock(sandbox):
    assert sandbox.catalog()["clock"] == "2026-06-01T00:00:00.000Z"
    assert sandbox.advance(3600) == "2026-06-01T01:00:00.000Z"
    assert sandbox.advance(0.5) == "2026-06-01T01:00:00.500Z"
    assert sandbox.apps is not None and sandbox.apps.state.world.clock.hour == 1


@pytest.mark.parametrize(
    "body", [{}, {"seconds": -1}, {"seconds": "60"}, {"seconds": True}, {"seconds": 1e12}, [60]], ids=str
)
def test_advance_validation(sandbox, body):
    assert_error(httpx.post(f"{sandbox.base_url}/sandbox/advance", json=body), 422, "validation_error")


def test_catalog_is_the_worlds(sandbox):
    catalog = sandbox.catalog()
    assert set(catalog) >= {"clock", "events", "communities", "schools", "courses", "products"}


def test_stats_count_per_operation_and_status(sandbox):
    token = sandbox.token()
    sandbox.reset_stats()
    assert sandbox.stats() == {"total": 0, "operations": {}, "faults": {}}
    with httpx.Client(base_url=sandbox.base_url, headers={"Authorization": f"Bearer {token}"}) as client:
        for _ in range(3):
            client.get("/store/v1/products")
        client.get("/store/v1/products", params={"page": 0})
        client.get("/store/v1/sales/nope")
        client.get("/store/v1/sales/SALE001", headers={"Authorization": "Bearer wrong"})
        client.get("/no/such/path")
        client.get("/sandbox/catalog")
    sandbox.token()
    assert sandbox.stats() == {
        "total": 7,
        "operations": {
            "list_products": {"200": 3, "422": 1},
            "sale_details": {"404": 1, "401": 1},
            "token_exchange": {"200": 1},
        },
        "faults": {},
    }
    sandbox.reset_stats()
    assert sandbox.stats()["total"] == 0


def test_every_answer_is_dated_by_the_worlds_clock_once(sandbox):
    """The `Date` header is the world's clock (uvicorn's wall-clock one replaced, not added to)."""
    token = sandbox.token()
    auth = {"Authorization": f"Bearer {token}"}
    answers = {
        "operation": httpx.get(f"{sandbox.base_url}/store/v1/products", headers=auth),
        "error": httpx.get(f"{sandbox.base_url}/store/v1/sales/nope", headers=auth),
        "unknown path": httpx.get(f"{sandbox.base_url}/no/such/path"),
        "sandbox route": httpx.get(f"{sandbox.base_url}/sandbox/catalog"),
        "auth app": httpx.post(f"{sandbox.auth_url}/sandbox/authorize", json={"client_id": "nobody"}),
    }
    assert {name: r.headers.get_list("date") for name, r in answers.items()} == {
        name: ["Mon, 01 Jun 2026 00:00:00 GMT"] for name in answers
    }
    assert answers["operation"].status_code == 200 and answers["error"].status_code == 404
    moved = httpx.post(f"{sandbox.base_url}/sandbox/advance", json={"seconds": 86400 * 3 + 59.9})
    assert moved.headers.get_list("date") == ["Thu, 04 Jun 2026 00:00:59 GMT"]
    later = httpx.get(f"{sandbox.base_url}/store/v1/products", headers=auth)
    assert later.headers.get_list("date") == ["Thu, 04 Jun 2026 00:00:59 GMT"]


def test_the_date_header_of_a_running_process_is_the_worlds():
    """`python -m sandbox serve` (uvicorn with its own settings path) dates answers the same way."""
    from sandbox.running import running_sandbox_process

    with running_sandbox_process(seed=1, scale=20, rate_limits=False) as sandbox:
        catalog = httpx.get(f"{sandbox.base_url}/sandbox/catalog")
        assert catalog.headers.get_list("date") == ["Mon, 01 Jun 2026 00:00:00 GMT"]
