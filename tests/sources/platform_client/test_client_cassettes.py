"""Recorded sandbox traffic (vcrpy), replayed offline.

Each scenario runs the same code in both modes. When its cassette exists it is replayed with a fake clock
(no network, no waiting); when it does not, or with PLATFORM_SYNC_RECORD=1, it is recorded against a
sandbox served in this process. Ids the scenario needs are kept beside the cassette (`<name>.json`);
tokens and codes never are, and the recorder scrubs them from the traffic.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from sandbox import running
from sources.platform_client.auth import exchange_code
from sources.platform_client.client import PlatformClient
from sources.platform_client.clock import Clock, SystemClock
from sources.platform_client.errors import MissingScopeError, NotFoundError, TokenExchangeError
from sources.platform_client.errors import ValidationError as ApiValidationError
from sources.platform_client.operations import ALL_SCOPES

CASSETTES = Path(__file__).parent / "cassettes"
RECORD = os.environ.get("PLATFORM_SYNC_RECORD") == "1"
DEMO_CLIENT_ID = "sandbox-demo"  # contracts part 2: the sandbox's public demo application
DEMO_CLIENT_SECRET = "sandbox-demo-secret"  # public demo value; scrubbed from cassettes anyway
REDIRECT_URI = "http://localhost/callback"
TIME_SCALE = 60.0


@dataclass
class Session:
    base_url: str
    auth_url: str
    tokens: dict[str, str]
    codes: list[str]
    ids: dict[str, Any]
    clock: Clock
    replaying: bool
    clients: list[PlatformClient] = field(default_factory=list)

    def client(self, token: str = "all", **kwargs: Any) -> PlatformClient:
        kwargs.setdefault("rate_limit_time_scale", TIME_SCALE)
        kwargs.setdefault("backoff_base", 0.01)
        client = PlatformClient(self.base_url, self.tokens[token], clock=self.clock, **kwargs)
        self.clients.append(client)
        return client


@contextlib.contextmanager
def session(
    name: str,
    recorder,
    fake_clock: Clock,
    *,
    tokens: dict[str, Sequence[str] | None],
    codes: int = 0,
    **sandbox_options: Any,
) -> Iterator[Session]:
    cassette = CASSETTES / f"{name}.yaml"
    context = CASSETTES / f"{name}.json"
    if cassette.exists() and not RECORD:
        ids = json.loads(context.read_text())["ids"]
        replay = Session(
            "https://api.replay.invalid",
            "https://auth.replay.invalid",
            {token: f"replayed-{token}-token" for token in tokens},
            [f"replayed-code-{n}" for n in range(codes)],
            ids,
            fake_clock,
            replaying=True,
        )
        with recorder(CASSETTES, "none").use_cassette(cassette.name):
            yield replay
        return
    with _sandbox_to_record(sandbox_options) as sandbox:
        catalog = sandbox.catalog()
        school = catalog["schools"][0]
        ids = {
            "event_id": catalog["events"][0]["id"],
            "course_id": catalog["courses"][0]["id"],
            "community_id": catalog["communities"][0]["id"],
            "team_slug": school["team_slug"],
            "student_slug": school["student_slugs"][0],
        }
        live = Session(
            sandbox.base_url,
            sandbox.auth_url,
            {token: sandbox.token(scopes) for token, scopes in tokens.items()},
            [sandbox.authorize() for _ in range(codes)],
            ids,
            SystemClock(),
            replaying=False,
        )
        cassette.unlink(missing_ok=True)
        context.write_text(
            json.dumps({"ids": ids, "sandbox": sandbox_options}, indent=2, sort_keys=True) + "\n"
        )
        with recorder(CASSETTES, "once").use_cassette(cassette.name):
            yield live
    for client in live.clients:
        client.close()


@contextlib.contextmanager
def _sandbox_to_record(sandbox_options: dict[str, Any]) -> Iterator[Any]:
    """A sandbox started here, or the one at PLATFORM_SYNC_RECORD_BASE_URL / _AUTH_URL (`make cassettes
    BASE_URL=... AUTH_URL=...`), started with the options recorded beside the cassette."""
    base_url = os.environ.get("PLATFORM_SYNC_RECORD_BASE_URL")
    if base_url:
        handle = running.SandboxHandle(
            base_url.rstrip("/"), os.environ["PLATFORM_SYNC_RECORD_AUTH_URL"].rstrip("/")
        )
        handle.set_faults(sandbox_options.get("faults"))
        try:
            yield handle
        finally:
            handle.set_faults(None)
        return
    with running.running_sandbox(time_scale=TIME_SCALE, **sandbox_options) as sandbox:
        yield sandbox


def recorded_authorization_headers(cassette: Path) -> list[str]:
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    return [
        name
        for interaction in interactions
        for name in interaction["request"]["headers"]
        if name.lower() == "authorization"
    ]


def test_api_tour(recorder, clock):
    """Token exchange, paging, details and the error taxonomy, as the sandbox answered them."""
    scopes = {"all": None, "products_only": ["store_products_read"]}
    with session("api_tour", recorder, clock, tokens=scopes, codes=1, seed=1, scale=200) as s:
        grant = exchange_code(s.auth_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, s.codes[0], REDIRECT_URI)
        assert ALL_SCOPES <= grant.scopes
        with pytest.raises(TokenExchangeError, match="already used"):
            exchange_code(s.auth_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, s.codes[0], REDIRECT_URI)

        client = s.client(items_per_page=5)
        pages = list(client.paginate("list_products"))
        assert [(p.page, p.pages, p.items_per_page) for p in pages] == [(1, 3, 5), (2, 3, 5), (3, 3, 5)]
        assert len({item["id"] for p in pages for item in p.items}) == pages[0].total_items == 12

        comments = list(client.paginate("list_lesson_comments", params={"courseId": s.ids["course_id"]}))
        assert sum(len(p.items) for p in comments) == comments[0].total_items
        assert {c["lessonId"] for p in comments for c in p.items}

        event = client.request("event_details", {"id": s.ids["event_id"]})
        assert event["id"] == s.ids["event_id"]
        path = {"teamSlug": s.ids["team_slug"], "studentSlug": s.ids["student_slug"]}
        assert all(p.items for p in client.paginate("list_enrollments", path))

        with pytest.raises(NotFoundError):
            client.request("subscription_details", {"id": "999999999"})
        window = {"startDate": datetime(2026, 5, 1, tzinfo=UTC), "endDate": datetime(2026, 4, 1, tzinfo=UTC)}
        with pytest.raises(ApiValidationError, match="startDate: must not be after endDate"):
            list(client.paginate("list_fiscal_documents", params=window))
        with pytest.raises(MissingScopeError) as missing:
            list(s.client("products_only").paginate("list_affiliations"))
        assert missing.value.scopes == ("store_affiliates_read",)


def test_rate_limited_then_adapted(recorder, clock):
    """A client configured far above the server's limit: 429s with Retry-After, then a lower limit."""
    with session("rate_limited", recorder, clock, tokens={"all": None}, seed=1, scale=200) as s:
        client = s.client(rate_limits={"event_details": 100_000})
        for _ in range(60):
            assert client.request("event_details", {"id": s.ids["event_id"]})["id"] == s.ids["event_id"]
        stats = client.stats["event_details"]
        assert stats.rate_limited >= 1 and stats.retries == stats.rate_limited
        assert (client._limiters.get("event_details").limit or 0) < 100_000
        if s.replaying:
            assert stats.rate_limit_wait_seconds >= stats.rate_limited  # Retry-After is at least 1 s


def test_server_errors_retried(recorder, clock):
    """Injected 500/502/503 answers are retried; every page arrives once."""
    with session(
        "server_errors", recorder, clock, tokens={"all": None}, seed=1, scale=200, faults="error=0.3,seed=4"
    ) as s:
        client = s.client(items_per_page=3, max_retries=8)
        for operation in ("list_products", "list_transfers"):
            pages = list(client.paginate(operation))
            ids = [item["id"] for p in pages for item in p.items]
            assert len(ids) == len(set(ids)) == pages[0].total_items
        assert sum(stats.retries for stats in client.stats.values()) >= 1


def test_recorder_writes_no_secret(tmp_path, recorder, token):
    """Offline: what the recorder writes for a token exchange and an API call holds no secret, and replays."""
    secret, code, access = "the-client-s3cret", "the-one-time-code", "the-access-t0ken"

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/token":
            return httpx.Response(200, json={"access_token": access, "token_type": "bearer", "scope": "a b"})
        return httpx.Response(200, json={"id": "s1", "code": request.url.params.get("code")})

    def run() -> tuple[str, dict[str, Any]]:
        grant = exchange_code(
            "https://auth.test", "app", secret, code, REDIRECT_URI, httpx.MockTransport(handle)
        )
        with PlatformClient("https://api.test", token, transport=httpx.MockTransport(handle)) as client:
            return grant.access_token, client.request("sale_details", {"id": "s1"}, params={"code": code})

    with recorder(tmp_path, "once").use_cassette("secrets.yaml"):
        assert run() == (access, {"id": "s1", "code": code})
    written = (tmp_path / "secrets.yaml").read_text()
    for value in (secret, code, access, token):
        assert value not in written
    assert not recorded_authorization_headers(tmp_path / "secrets.yaml")
    with recorder(tmp_path, "none").use_cassette("secrets.yaml"):
        assert run() == ("REDACTED", {"id": "s1", "code": "REDACTED"})


def test_committed_cassettes_hold_no_secret(token):
    cassettes = sorted(CASSETTES.glob("*.yaml"))
    for cassette in cassettes:
        text = cassette.read_text()
        assert DEMO_CLIENT_SECRET not in text, cassette.name
        assert token not in text and "Bearer" not in text, cassette.name
        assert not recorded_authorization_headers(cassette), cassette.name
