"""The client against the running sandbox (in this process, loopback only): exact request counts from
the sandbox's own stats, paging every list to its end, faults, revocation, and real rate limits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from sandbox import auth as sandbox_auth
from sandbox import running
from sources.platform_client.auth import exchange_code, store_token
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import (
    AuthenticationError,
    MissingScopeError,
    NotFoundError,
    TokenExchangeError,
)
from sources.platform_client.errors import ValidationError as ApiValidationError
from sources.platform_client.operations import ALL_SCOPES

TIME_SCALE = 60.0  # every rate-limit window is one second, on both sides


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    with running.running_sandbox(seed=1, scale=200, time_scale=TIME_SCALE) as handle:
        yield handle


@pytest.fixture
def fresh(sandbox) -> Iterator[Any]:
    """The shared sandbox with zeroed stats and no faults (rate-limit buckets are per token: each test
    takes its own token)."""
    sandbox.set_faults(None)
    sandbox.reset_stats()
    yield sandbox
    sandbox.set_faults(None)


def new_client(sandbox, token=None, **kwargs) -> PlatformClient:
    kwargs.setdefault("rate_limit_time_scale", TIME_SCALE)
    kwargs.setdefault("backoff_base", 0.01)  # quick retries: the point is their number, not their pace
    return PlatformClient(sandbox.base_url, token or sandbox.token(), **kwargs)


def api_counts(sandbox) -> dict[str, dict[str, int]]:
    operations = sandbox.stats()["operations"]
    return {name: counts for name, counts in operations.items() if name != "token_exchange"}


def paged_calls(catalog: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """One call of every paged operation, with ids from the sandbox's catalog."""
    school = catalog["schools"][0]
    window = {"startDate": datetime(2024, 6, 1, tzinfo=UTC), "endDate": datetime(2026, 6, 1, tzinfo=UTC)}
    return [
        ("list_products", {}, {}),
        ("list_transfers", {}, {}),
        ("list_affiliations", {}, {}),
        ("list_subscriptions", {}, {"filterBy": "update", **window}),
        ("list_fiscal_documents", {}, window),
        ("list_lesson_comments", {}, {"courseId": catalog["courses"][0]["id"]}),
        ("list_attendees", {"id": catalog["events"][0]["id"]}, {}),
        ("list_community_commenters", {"communityId": catalog["communities"][0]["id"]}, {"days": 30}),
        (
            "list_enrollments",
            {"teamSlug": school["team_slug"], "studentSlug": school["student_slugs"][0]},
            {},
        ),
    ]


def read_all(client: PlatformClient, catalog) -> dict[str, list[dict[str, Any]]]:
    return {
        name: [item for page in client.paginate(name, path, params) for item in page.items]
        for name, path, params in paged_calls(catalog)
    }


def test_every_paged_list_is_read_to_its_end_with_one_request_per_page(fresh):
    catalog = fresh.catalog()
    with new_client(fresh, items_per_page=7) as client:
        for name, path, params in paged_calls(catalog):
            fresh.reset_stats()
            pages = list(client.paginate(name, path, params))
            items = [item for page in pages for item in page.items]
            total = pages[0].total_items if pages else 0
            assert len(items) == total, name
            assert all(page.items_per_page == 7 for page in pages), name
            expected_requests = max(1, -(-total // 7))
            assert api_counts(fresh) == {name: {"200": expected_requests}}, name


def test_page_size_above_the_maximum_is_clamped_by_the_server(fresh):
    with new_client(fresh, items_per_page=500) as client:
        pages = list(client.paginate("list_lesson_comments"))
    assert {page.items_per_page for page in pages} == {100}
    assert sum(len(page.items) for page in pages) == pages[0].total_items


def test_errors_from_the_sandbox(fresh):
    with new_client(fresh) as client:
        with pytest.raises(NotFoundError, match="subscription_details: not found"):
            client.request("subscription_details", {"id": "999999999"})
        window = {"startDate": "2026-05-01", "endDate": "2026-04-01"}
        with pytest.raises(ApiValidationError) as caught:
            list(client.paginate("list_fiscal_documents", params=window))
        assert caught.value.details == (("startDate", "must not be after endDate"),)
    with new_client(fresh, fresh.token(scopes=["store_products_read"])) as client:
        with pytest.raises(MissingScopeError) as missing:
            list(client.paginate("list_affiliations"))
        assert missing.value.scopes == ("store_affiliates_read",)
    assert api_counts(fresh) == {
        "subscription_details": {"404": 1},
        "list_fiscal_documents": {"422": 1},
        "list_affiliations": {"403": 1},
    }


def test_faults_are_retried_and_the_data_is_complete(fresh):
    catalog = fresh.catalog()
    with new_client(fresh, items_per_page=5) as client:
        expected = read_all(client, catalog)
    fresh.set_faults("error=0.08,drop=0.04,truncate=0.04,seed=11")
    fresh.reset_stats()
    with new_client(fresh, items_per_page=5, max_retries=8) as client:
        assert read_all(client, catalog) == expected
        retries = sum(stats.retries for stats in client.stats.values())
    faults = fresh.stats()["faults"]
    injected = sum(faults.get(kind, 0) for kind in ("error", "drop", "truncate"))
    assert injected > 0
    assert retries == injected  # one retry per injected fault, not one more


def test_a_revoked_token_stops_at_once_with_instructions(fresh):
    fresh.set_faults("revoke_after=3")
    with new_client(fresh, items_per_page=2) as client:
        with pytest.raises(AuthenticationError) as caught:
            list(client.paginate("list_products"))
    assert "access token revoked" in str(caught.value)
    assert "platform-sync auth --code <code>" in str(caught.value)
    assert api_counts(fresh) == {"list_products": {"200": 2, "401": 1}}


def test_spec_limits_are_met_without_429_by_five_threads(fresh):
    """75 event details from 5 threads at 30 per (scaled) second: two waits, no 429."""
    event_id = fresh.catalog()["events"][0]["id"]
    with new_client(fresh) as client:
        started = time.monotonic()
        threads = [
            threading.Thread(
                target=lambda: [client.request("event_details", {"id": event_id}) for _ in range(15)]
            )
            for _ in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        elapsed = time.monotonic() - started
        stats = client.stats["event_details"]
    assert (stats.requests, stats.rate_limited, stats.retries) == (75, 0, 0)
    assert api_counts(fresh) == {"event_details": {"200": 75}}
    assert 2.0 <= elapsed < 6.0  # bursts of 30 at 0, ~1.02 and ~2.04 s


def test_a_client_above_the_limit_adapts_to_429(fresh):
    """Configured far above the server's limit, the client gets 429s, honours Retry-After, lowers its own
    limit and still completes every request."""
    event_id = fresh.catalog()["events"][0]["id"]
    with new_client(fresh, rate_limits={"event_details": 100_000}) as client:
        for _ in range(70):
            assert client.request("event_details", {"id": event_id})["id"] == event_id
        stats = client.stats["event_details"]
        limit = client._limiters.get("event_details").limit
    counts = api_counts(fresh)["event_details"]
    assert counts["200"] == 70
    assert stats.rate_limited == counts.get("429", 0) >= 1
    assert limit is not None and limit < 100_000


def test_token_exchange_and_store_then_use(fresh, tmp_path):
    code = fresh.authorize()
    grant = exchange_code(
        fresh.auth_url,
        sandbox_auth.DEMO_CLIENT_ID,
        sandbox_auth.DEMO_CLIENT_SECRET,
        code,
        "http://localhost/cb",
    )
    assert ALL_SCOPES <= grant.scopes
    with pytest.raises(
        TokenExchangeError, match="already used, or the application is unknown: authorize again"
    ):
        exchange_code(
            fresh.auth_url,
            sandbox_auth.DEMO_CLIENT_ID,
            sandbox_auth.DEMO_CLIENT_SECRET,
            code,
            "http://localhost/cb",
        )
    path = tmp_path / ".dlt" / "secrets.toml"
    store_token(path, grant)
    import tomlkit

    stored = tomlkit.parse(path.read_text())["sources"]["platform"]
    with new_client(fresh, str(stored["access_token"])) as client:
        assert list(client.paginate("list_products"))
