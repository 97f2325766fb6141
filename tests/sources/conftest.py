"""Fixtures for the client's tests: a fake clock, a recording mock API, and client factories.

Nothing here opens a socket: every client talks to an `httpx.MockTransport`.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest
import vcr
from vcr.request import Request as VcrRequest

from sources.platform_client.client import PlatformClient

TOKEN = "tok_live_S3CR3T_4f9a2c7e1b"
BASE_URL = "https://api.platform.test"
EPOCH = datetime(2026, 6, 1, tzinfo=UTC)


class FakeClock:
    """A clock whose time moves only when someone sleeps.

    Threads sleeping at the same time sleep *in parallel*, as in real time: a sleep ends `seconds` after
    the sleeping thread last read the clock, and moves the clock there unless it is already later. (The
    code under test reads the clock, computes a wait, sleeps: the pattern this models.)
    """

    def __init__(self, start: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._now = start
        self._last_read = threading.local()
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        with self._lock:
            self._last_read.value = self._now
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            if seconds > 0:
                start = getattr(self._last_read, "value", self._now)
                self._now = max(self._now, start + seconds)
                self._last_read.value = self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.monotonic())

    @property
    def slept(self) -> float:
        return sum(s for s in self.sleeps if s > 0)


@dataclass
class Seen:
    """A request as the server saw it, without the token value."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    at: float

    @property
    def page(self) -> int | None:
        value = self.query.get("page")
        return int(value) if value is not None else None


Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class MockApi:
    """An `httpx.MockTransport` that records every request (the Authorization value replaced by a marker
    telling whether it was the expected token) and answers with `handler`."""

    handler: Handler
    clock: FakeClock | None = None
    seen: list[Seen] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = (
                "Bearer <TOKEN>" if headers["authorization"] == f"Bearer {TOKEN}" else "<OTHER>"
            )
        body = httpx.Response(200, content=request.content).json() if request.content else None
        with self._lock:
            self.seen.append(
                Seen(
                    request.method,
                    request.url.path,
                    dict(request.url.params.multi_items()),
                    headers,
                    body,
                    self.clock.monotonic() if self.clock else 0.0,
                )
            )
        return self.handler(request)

    @property
    def calls(self) -> list[tuple[str, str, dict[str, str]]]:
        return [(s.method, s.path, s.query) for s in self.seen]


def envelope(items: list[dict[str, Any]], page: int, pages: int, per_page: int, total: int) -> dict[str, Any]:
    return {"page": page, "pages": pages, "itemsPerPage": per_page, "totalItems": total, "items": items}


def paged_handler(
    items: list[dict[str, Any]], *, first_page: int = 1, default_size: int = 10, max_size: int = 100
) -> Handler:
    """A list served like the sandboxes of contracts part 1 (first page number `first_page`)."""

    def handle(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", first_page))
        size = min(int(request.url.params.get("itemsPerPage", default_size)), max_size)
        pages = -(-len(items) // size)
        offset = (page - first_page) * size
        chunk = items[offset : offset + size] if offset >= 0 else []
        return httpx.Response(200, json=envelope(chunk, page, pages, size, len(items)))

    return handle


def scripted(*responses: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]) -> Handler:
    """Answer the n-th request with the n-th response (or raise the n-th exception); fail past the end."""
    queue = list(responses)
    lock = threading.Lock()

    def handle(request: httpx.Request) -> httpx.Response:
        with lock:
            if not queue:
                raise AssertionError(f"unexpected request {request.method} {request.url}")
            answer = queue.pop(0)
        if isinstance(answer, Exception):
            if isinstance(answer, httpx.RequestError):
                answer._request = request  # httpx attaches the request when it raises for real
            raise answer
        if callable(answer):
            return answer(request)
        return answer

    return handle


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def clock_factory() -> type[FakeClock]:
    """The FakeClock class, for hypothesis tests (which take no function-scoped fixtures)."""
    return FakeClock


# Helpers are handed out as fixtures: the tests under tests/sources take them by name, without an import.


@pytest.fixture
def token() -> str:
    return TOKEN


@pytest.fixture
def base_url() -> str:
    return BASE_URL


@pytest.fixture
def paged() -> Callable[..., Handler]:
    """`paged(items, first_page=1, default_size=10, max_size=100)`: a sandbox-like paged list handler."""
    return paged_handler


@pytest.fixture
def script() -> Callable[..., Handler]:
    """`script(*responses)`: answer the n-th request with the n-th response or exception."""
    return scripted


@pytest.fixture
def page_of() -> Callable[..., dict[str, Any]]:
    """`page_of(items, page, pages, per_page, total)`: a paged envelope."""
    return envelope


@pytest.fixture
def make_client(clock: FakeClock) -> Iterator[Callable[..., tuple[PlatformClient, MockApi]]]:
    """`make_client(handler, **client_kwargs)` → (client on a MockApi with the fake clock, the MockApi)."""
    clients: list[PlatformClient] = []

    def make(handler: Handler, **kwargs: Any) -> tuple[PlatformClient, MockApi]:
        api = MockApi(handler, clock)
        options: dict[str, Any] = {"clock": clock, "rng": random.Random(7), "transport": api.transport()}
        options.update(kwargs)
        client = PlatformClient(BASE_URL, TOKEN, **options)
        clients.append(client)
        return client, api

    yield make
    for client in clients:
        client.close()


# --- vcrpy cassettes --------------------------------------------------------------------------------------

SCRUBBED_KEYS = frozenset({"access_token", "refresh_token", "client_secret", "code"})
REDACTED = "REDACTED"


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if k in SCRUBBED_KEYS and value[k] else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def scrub_body(body: bytes | str | None) -> bytes | str | None:
    """A JSON or form body with the values of secret keys replaced (the keys stay, so replays parse)."""
    if not body:
        return body
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        scrubbed = json.dumps(_scrub(json.loads(text)), ensure_ascii=False)
    except ValueError:
        pairs = parse_qsl(text, keep_blank_values=True)
        if not pairs or not any(key in SCRUBBED_KEYS for key, _ in pairs):
            return body
        scrubbed = urlencode([(k, REDACTED if k in SCRUBBED_KEYS else v) for k, v in pairs])
    return scrubbed.encode() if isinstance(body, bytes) else scrubbed


def scrub_request(request: VcrRequest) -> VcrRequest | None:
    """Drop the sandbox's control routes (not API traffic); scrub secrets from the body and the query."""
    if urlsplit(request.uri).path.startswith("/sandbox/"):
        return None
    request.body = scrub_body(request.body)
    parts = urlsplit(request.uri)
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if k in SCRUBBED_KEYS else v) for k, v in pairs])
        request.uri = urlunsplit(parts._replace(query=query))
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """Scrub secrets from a recorded answer's body and keep its Content-Length true."""
    body = response["body"]["string"]
    scrubbed = scrub_body(body)
    if scrubbed is not body:
        response["body"]["string"] = scrubbed
        for name in list(response["headers"]):
            if name.lower() == "content-length":
                length = len(scrubbed.encode() if isinstance(scrubbed, str) else scrubbed or b"")
                response["headers"][name] = [str(length)]
    return response


def make_recorder(directory: Path, record_mode: str) -> vcr.VCR:
    """A VCR that never writes a token, secret or code, and matches requests whatever host and port the
    sandbox happened to bind."""
    return vcr.VCR(
        cassette_library_dir=str(directory),
        record_mode=record_mode,
        filter_headers=["authorization"],
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        match_on=["method", "path", "query"],
        decode_compressed_response=True,
    )


@pytest.fixture
def recorder() -> Callable[[Path, str], vcr.VCR]:
    """`recorder(directory, record_mode)`: the cassette recorder of these tests."""
    return make_recorder
