"""Sandbox-only routes (contracts part 2): advance, catalog, stats."""

from __future__ import annotations

import httpx
import pytest
from conftest import assert_error
from fake_world import FakeWorld

from sandbox.testing import running_sandbox


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
