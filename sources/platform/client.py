"""`PlatformClient`: the platform API over one pooled `httpx.Client`, safe to share between threads.

Every call goes the same way: rate limiter (`ratelimit.py`) → HTTP → classification → retry policy
(`retry.py`) → the value, or one exception of the taxonomy (`errors.py`). Paged lists are walked by
`paging.py`. What may be sent where comes from the operations table (`operations.py`).
"""

from __future__ import annotations

import functools
import json
import logging
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from sources.platform.auth import BearerAuth
from sources.platform.clock import Clock, SystemClock
from sources.platform.errors import (
    REAUTHORIZE_HINT,
    ApiError,
    ConfigurationError,
    MalformedResponseError,
    PlatformError,
    TransportError,
    error_for_status,
    parse_error_body,
    tries,
)
from sources.platform.operations import Operation, get_operation
from sources.platform.paging import Page, PageWalk, parse_envelope
from sources.platform.ratelimit import DEFAULT_WINDOW_MARGIN, Permit, RateLimiters
from sources.platform.redaction import Redactor, redact_url
from sources.platform.retry import Failure, FailureKind, RetryPolicy

__all__ = ["OperationStats", "Page", "PlatformClient"]

logger = logging.getLogger("platform_sync.client")

T = TypeVar("T")
USER_AGENT = "platform-sync/0.1 (+httpx)"
PAGING_PARAMS = frozenset({"page", "itemsPerPage"})


@dataclass(frozen=True, slots=True)
class OperationStats:
    """Counts for one operation. `requests` counts every HTTP try; `errors` the calls that raised."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0  # 429 answers
    errors: int = 0
    rate_limit_wait_seconds: float = 0.0  # waited for the proactive limiter (and Retry-After blocks)
    backoff_seconds: float = 0.0  # slept between tries


class _StatsBook:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_operation: dict[str, OperationStats] = {}

    def add(self, operation: str, **deltas: float) -> None:
        with self._lock:
            current = self._by_operation.get(operation, OperationStats())
            changes = {name: getattr(current, name) + value for name, value in deltas.items()}
            self._by_operation[operation] = replace(current, **changes)

    def snapshot(self) -> dict[str, OperationStats]:
        with self._lock:
            return dict(self._by_operation)


def total_stats(stats: Mapping[str, OperationStats]) -> OperationStats:
    """The sum over operations of a `PlatformClient.stats` snapshot."""
    totals = {f.name: sum(getattr(s, f.name) for s in stats.values()) for f in fields(OperationStats)}
    return OperationStats(**totals)


def format_query_value(value: object) -> Any:
    """A query value as the API wants it: datetimes in UTC with `Z` (a naive one is taken as UTC), dates
    as midnight UTC, booleans `true`/`false`, lists element-wise."""
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        timespec = "milliseconds" if moment.microsecond else "seconds"
        return moment.replace(tzinfo=None).isoformat(timespec=timespec) + "Z"
    if isinstance(value, date):
        return f"{value.isoformat()}T00:00:00Z"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        return [format_query_value(item) for item in value]
    return str(value)


def _classify_transport(exc: httpx.RequestError) -> FailureKind:
    # Only these exceptions prove the request never left: anything later may have reached the server.
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return FailureKind.CONNECT
    if isinstance(exc, httpx.TimeoutException):
        return FailureKind.TIMEOUT
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        return FailureKind.DROPPED
    if isinstance(exc, httpx.DecodingError):
        return FailureKind.MALFORMED
    return FailureKind.INVALID  # LocalProtocolError, UnsupportedProtocol, ...: asking again won't help


def _decode_json(
    response: httpx.Response, operation: str, page: int | None, redact: Callable[[str], str]
) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        snippet = redact(response.content[:80].decode("utf-8", errors="replace"))
        where = f" page {page}" if page is not None else ""
        raise MalformedResponseError(
            f"{operation}:{where} the answer ({response.status_code}, {len(response.content)} bytes) is not "
            f"JSON, perhaps truncated: {snippet!r}",
            operation=operation,
            page=page,
        ) from None


class PlatformClient:
    """Client of the platform API. Thread-safe: share one instance between all resources of a run.

    `max_retries` is the number of tries per request, the first included (contracts part 3). Limits are
    requests per minute by operation name (spec part 8 by default); `rate_limit_time_scale` divides every
    window. `clock`, `rng` and the backoff settings exist for tests and tuning.
    """

    def __init__(
        self,
        base_url: str,
        access_token: str,
        *,
        rate_limits: Mapping[str, float] | None = None,
        rate_limit_time_scale: float = 1.0,
        items_per_page: int = 100,
        max_retries: int = 6,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        max_retry_after: float = 300.0,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        window_margin: float = DEFAULT_WINDOW_MARGIN,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if not isinstance(access_token, str) or not access_token.strip():
            raise ConfigurationError("access_token is empty. " + REAUTHORIZE_HINT)
        url = httpx.URL(base_url) if isinstance(base_url, str) else None
        if url is None or url.scheme not in ("http", "https") or not url.host:
            raise ConfigurationError(f"base_url must be an http(s) URL, got {redact_url(base_url)!r}")
        if isinstance(items_per_page, bool) or not isinstance(items_per_page, int) or items_per_page < 1:
            raise ConfigurationError(
                f"items_per_page must be a whole number of at least 1, got {items_per_page!r}"
            )
        if not timeout > 0:
            raise ConfigurationError(f"timeout must be positive, got {timeout!r}")
        self.base_url = str(url).rstrip("/")
        self.items_per_page = items_per_page
        self._redactor = Redactor([access_token])
        self._clock: Clock = clock or SystemClock()
        self._policy = RetryPolicy(
            max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            max_retry_after=max_retry_after,
            rng=rng,
        )
        self._limiters = RateLimiters(rate_limits, rate_limit_time_scale, self._clock, margin=window_margin)
        self._stats = _StatsBook()
        self._http = httpx.Client(
            base_url=self.base_url,
            auth=BearerAuth(access_token),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"PlatformClient(base_url={self.base_url!r}, access_token=***)"

    # public API -----------------------------------------------------------------------------------------

    @property
    def stats(self) -> dict[str, OperationStats]:
        """A snapshot of the counts per operation name (operations never called are absent)."""
        return self._stats.snapshot()

    @property
    def rate_limits(self) -> Mapping[str, float]:
        """The proactive limits in force, requests per minute by operation (unscaled)."""
        return self._limiters.rates

    def request(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        json: Any = None,
    ) -> Any:
        """Call one operation and return its JSON document."""
        operation = self._operation(operation_name)
        path = operation.render_path(path_params)
        query = self._query(operation, params)
        missing_paging = PAGING_PARAMS - set(query) if operation.paging_required else set()
        if missing_paging:
            raise ConfigurationError(
                f"{operation.name} requires {', '.join(sorted(missing_paging))}; use paginate() or pass them",
                operation=operation.name,
            )
        return self._call(operation, path, query, json, parse=lambda document: document, page=None)

    def paginate(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
    ) -> Iterator[Page]:
        """Yield the non-empty pages of a paged list one by one, fetching each only when asked for."""
        operation = self._operation(operation_name)
        if not operation.paged:
            raise ConfigurationError(
                f"{operation.name} is not a paged list; use request()", operation=operation.name
            )
        if params and PAGING_PARAMS & set(params):
            raise ConfigurationError(
                f"{operation.name}: page and itemsPerPage are set by the client (items_per_page)",
                operation=operation.name,
            )
        path = operation.render_path(path_params)
        query = self._query(operation, params)
        return self._walk(operation, path, query)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # internals --------------------------------------------------------------------------------------------

    @staticmethod
    def _operation(name: str) -> Operation:
        operation = get_operation(name)
        if operation.on_auth_server:
            raise ConfigurationError(
                f"{name} is served by auth_url: use auth.exchange_code()", operation=name
            )
        return operation

    @staticmethod
    def _query(operation: Operation, params: Mapping[str, object] | None) -> dict[str, Any]:
        query = {key: format_query_value(value) for key, value in (params or {}).items() if value is not None}
        missing = sorted(operation.required_query - set(query))
        if missing:
            raise ConfigurationError(
                f"{operation.name} requires the query parameter(s) {', '.join(missing)}",
                operation=operation.name,
            )
        return query

    def _walk(self, operation: Operation, path: str, query: dict[str, Any]) -> Iterator[Page]:
        walk = PageWalk(operation.name)
        number: int | None = walk.first
        while number is not None:
            try:
                page = self._call(
                    operation,
                    path,
                    {**query, "page": number, "itemsPerPage": self.items_per_page},
                    None,
                    parse=functools.partial(parse_envelope, operation=operation.name, requested_page=number),
                    page=number,
                )
            except ApiError as exc:
                if walk.zero_probe and 400 <= exc.status < 500:
                    # The page-0 probe was a guess about an inconsistent server; a refusal ends the walk.
                    logger.warning(
                        "%s: the server refused page 0 (%s); paging ends", operation.name, exc.status
                    )
                    return
                raise
            if walk.accept(page):
                yield page
            number = walk.next()

    def _call(
        self,
        operation: Operation,
        path: str,
        query: Mapping[str, Any],
        body: Any,
        *,
        parse: Callable[[Any], T],
        page: int | None,
    ) -> T:
        limiter = self._limiters.get(operation.name)
        attempt = 0
        while True:
            attempt += 1
            permit = limiter.acquire()
            self._stats.add(operation.name, requests=1, rate_limit_wait_seconds=permit.waited)
            outcome = self._attempt(operation, path, query, body, parse, page, permit)
            if not isinstance(outcome, _Failed):
                return outcome
            failure = outcome.failure
            if not self._policy.should_retry(failure, attempt, idempotent=operation.idempotent):
                self._stats.add(operation.name, errors=1)
                raise outcome.build(attempt) from outcome.cause
            server_delay = self._policy.server_delay(failure, self._clock.now())
            # After a 429 with Retry-After the limiter holds every thread of the operation until then.
            delay = (
                0.0
                if failure.status == 429 and server_delay is not None
                else (self._policy.delay(failure, attempt, self._clock.now()))
            )
            logger.warning(
                "%s: %s (try %d of %d); retrying %s",
                operation.name,
                outcome.summary,
                attempt,
                self._policy.max_attempts,
                f"in {delay:.2f}s" if delay else "when the rate limiter allows",
            )
            self._stats.add(operation.name, retries=1, backoff_seconds=delay)
            self._clock.sleep(delay)

    def _attempt(
        self,
        operation: Operation,
        path: str,
        query: Mapping[str, Any],
        body: Any,
        parse: Callable[[Any], T],
        page: int | None,
        permit: Permit,
    ) -> T | _Failed:
        """One try: the parsed value, or what went wrong."""
        started = self._clock.monotonic()
        try:
            response = self._http.request(operation.method, path, params=query, json=body)
        except httpx.RequestError as exc:
            return self._transport_failure(operation, path, exc, started)
        url = self._redact_url(response.request.url)
        logger.debug(
            "%s %s %s -> %d in %.3fs",
            operation.name,
            operation.method,
            url,
            response.status_code,
            self._clock.monotonic() - started,
        )
        if response.is_success:
            try:
                return parse(_decode_json(response, operation.name, page, self._redactor.redact))
            except MalformedResponseError as exc:
                return _malformed_failure(operation, exc)
        failure = Failure(FailureKind.STATUS, response.status_code, response.headers.get("Retry-After"))
        if response.status_code == 429:
            self._stats.add(operation.name, rate_limited=1)
            self._limiters.get(operation.name).on_rate_limited(
                permit,
                retry_after=self._policy.server_delay(failure, self._clock.now()),
                server_limit=_int_header(response, "X-RateLimit-Limit"),
            )
        error_body = parse_error_body(response.content, response.reason_phrase, self._redactor.redact)
        # A POST answered 5xx may have been applied, which is why it was not retried: say so.
        note = _UNSAFE_NOTE if not operation.idempotent and response.status_code >= 500 else ""

        def build(attempts: int) -> PlatformError:
            return error_for_status(
                operation=operation.name,
                scopes=operation.scopes,
                status=failure.status or 0,
                body=error_body,
                url=url,
                attempts=attempts,
                note=note,
            )

        return _Failed(failure, f"answered {response.status_code} {error_body.message}", build)

    def _transport_failure(
        self, operation: Operation, path: str, exc: httpx.RequestError, started: float
    ) -> _Failed:
        url = self._redact_url(exc.request.url if _has_request(exc) else path)
        kind = _classify_transport(exc)
        logger.debug(
            "%s %s %s -> %s after %.3fs",
            operation.name,
            operation.method,
            url,
            type(exc).__name__,
            self._clock.monotonic() - started,
        )
        what = f"{type(exc).__name__}: {self._redactor(str(exc))}" if str(exc) else type(exc).__name__
        if kind is FailureKind.INVALID:
            return _Failed(
                Failure(kind),
                what,
                lambda _: TransportError(
                    f"{operation.name}: cannot send to {url} ({what})", operation=operation.name
                ),
                cause=exc,
            )
        note = "" if kind is FailureKind.CONNECT or operation.idempotent else _UNSAFE_NOTE

        def build(attempts: int) -> PlatformError:
            return TransportError(
                f"{operation.name}: no answer from {url} after {tries(attempts)} (last: {what}). "
                "Check base_url and the network, or raise `timeout`/`max_retries`." + note,
                operation=operation.name,
                attempts=attempts,
            )

        return _Failed(Failure(kind), what, build, cause=exc)

    def _redact_url(self, url: object) -> str:
        return self._redactor(redact_url(url))


_UNSAFE_NOTE = (
    " This request changes data and was not repeated because the server may have applied it: check "
    "before sending it again."
)


@dataclass(frozen=True, slots=True)
class _Failed:
    """A failed try: what the retry policy needs, a summary for the log, and the exception to raise if it
    is the last one (built then, with the number of tries made)."""

    failure: Failure
    summary: str
    build: Callable[[int], PlatformError]
    cause: BaseException | None = None


def _malformed_failure(operation: Operation, exc: MalformedResponseError) -> _Failed:
    # A POST whose 2xx body is broken was applied: never repeat it, and say so.
    note = "" if operation.idempotent else _UNSAFE_NOTE.replace("may have applied", "has applied")

    def build(attempts: int) -> PlatformError:
        advice = " The server keeps sending broken answers: run again later." if attempts > 1 else ""
        return MalformedResponseError(
            f"{exc.message} (after {tries(attempts)}).{advice}{note}",
            operation=operation.name,
            page=exc.page,
            attempts=attempts,
        )

    return _Failed(Failure(FailureKind.MALFORMED), exc.message, build)


def _has_request(exc: httpx.RequestError) -> bool:
    try:
        exc.request  # noqa: B018  # raises RuntimeError when httpx did not attach one
    except RuntimeError:
        return False
    return True


def _int_header(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
