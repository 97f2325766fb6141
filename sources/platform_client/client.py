"""`PlatformClient`: the platform API over one pooled `httpx.Client`, safe to share between threads.

Every call goes the same way: rate limiter (`ratelimit.py`) → HTTP → classification → retry policy
(`retry.py`) → the value, or one exception of the taxonomy (`errors.py`). Paged lists are walked by
`paging.py`. What may be sent where comes from the operations table (`operations.py`).
"""

from __future__ import annotations

import functools
import logging
import random
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from sources.platform_client.auth import USER_AGENT, BearerAuth
from sources.platform_client.clock import Clock, SystemClock
from sources.platform_client.errors import (
    REAUTHORIZE_HINT,
    ConfigurationError,
    MalformedResponseError,
    OperationDeferredError,
)
from sources.platform_client.inflight import Flows
from sources.platform_client.operations import Operation, get_operation
from sources.platform_client.outcomes import (
    Failed,
    decode_json,
    int_header,
    malformed_failure,
    request_url,
    status_failure,
    transport_failure,
)
from sources.platform_client.paged_list import PagedList, RawPage
from sources.platform_client.paging import Page, PagedBody
from sources.platform_client.ratelimit import (
    DEFAULT_WINDOW_MARGIN,
    Permit,
    RateLimiters,
    Schedule,
    Verdict,
)
from sources.platform_client.redaction import Redactor, check_api_url, redact_url
from sources.platform_client.retry import (
    DEFAULT_PATIENCE,
    Failure,
    FailureKind,
    RetryPolicy,
    parse_retry_after,
)
from sources.platform_client.servertime import ServerTime
from sources.platform_client.stats import OperationStats, StatsBook, total_stats
from sources.platform_client.walking import (
    DEFAULT_PAGES_AHEAD,
    DEFAULT_PAGES_AHEAD_TOTAL,
    MOST_AHEAD_PER_OPERATION,
    PagePool,
    in_order,
    walk_pages,
    walk_tail,
)

__all__ = [
    "OperationStats",
    "Page",
    "PagedList",
    "PlatformClient",
    "RawPage",
    "format_query_value",
    "total_stats",
]

logger = logging.getLogger("platform_sync.client")

T = TypeVar("T")
K = TypeVar("K")
P = TypeVar("P", bound=PagedBody)
PAGING_PARAMS = frozenset({"page", "itemsPerPage"})


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


class PlatformClient:
    """Client of the platform API. Thread-safe: share one instance between all resources of a run.

    `max_retries` is the number of tries per request, the first included (contracts part 3). Limits are
    requests per minute by operation name (spec part 8 by default); `rate_limit_time_scale` divides every
    window. A paged list has at least `pages_ahead` pages requested ahead of the one its caller takes (more
    as the operation's rule asks, `inflight.py`), and all walks together up to `pages_ahead_total`
    (`walking.py`; both 1 walk one page at a time).
    `clock`, `rng` and the backoff settings exist for tests and tuning.
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
        patience: float = DEFAULT_PATIENCE,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        window_margin: float = DEFAULT_WINDOW_MARGIN,
        pages_ahead: int = DEFAULT_PAGES_AHEAD,
        pages_ahead_total: int = DEFAULT_PAGES_AHEAD_TOTAL,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if not isinstance(access_token, str) or not access_token.strip():
            raise ConfigurationError("access_token is empty. " + REAUTHORIZE_HINT)
        if problem := check_api_url("base_url", base_url):
            raise ConfigurationError(problem)
        url = httpx.URL(base_url)
        if isinstance(items_per_page, bool) or not isinstance(items_per_page, int) or items_per_page < 1:
            raise ConfigurationError(
                f"items_per_page must be a whole number of at least 1, got {items_per_page!r}"
            )
        if not timeout > 0:
            raise ConfigurationError(f"timeout must be positive, got {timeout!r}")
        if not patience > 0:
            raise ConfigurationError(f"patience_seconds must be positive, got {patience!r}")
        self._patience = patience
        # operation -> why it waits for the next run (`OperationDeferredError`): asked nothing more
        self._deferred: dict[str, OperationDeferredError] = {}
        self._deferred_lock = threading.Lock()
        self._retried_kinds: set[tuple[FailureKind, int | None]] = set()  # logged once (`retry_or_raise`)
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
        self._stats = StatsBook()
        self._pages_ahead = max(1, pages_ahead)
        self._pages = PagePool(pages_ahead_total)
        # how many requests of each operation go at once, and the gate they pass (`inflight.py`)
        self._most_ahead = min(self._pages.total, max(self._pages_ahead, MOST_AHEAD_PER_OPERATION))
        self._flows = Flows(self._pages_ahead, self._most_ahead)
        self._server_time = ServerTime()
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
    def server_time(self) -> ServerTime:
        """The API's clock as the `Date` headers of its answers tell it (`servertime.py`)."""
        return self._server_time

    @property
    def rate_limit_time_scale(self) -> float:
        """How many times faster than the spec's the limits run (`rate_limit_time_scale`)."""
        return self._limiters.time_scale

    @property
    def rate_limits(self) -> Mapping[str, float]:
        """The proactive limits in force, requests per minute by operation (unscaled)."""
        return self._limiters.rates

    def in_flight_wanted(self, operation_name: str, least: int, most: int) -> int:
        """How many requests of an operation a reader may keep in flight (`inflight.OperationFlow.wanted`):
        the pace its rate limiter grants at its ceiling times the latency its answers take, with half again
        as headroom, within its congestion window, plus those sleeping before a retry (a request backing
        off gives its slot back); at least `least` (unless congestion cut the window), at most `most`.
        `least` while nothing is measured or the operation is unlimited."""
        schedule = self._limiters.get(operation_name).schedule()
        return self._flows.get(operation_name).wanted(schedule, least, most)

    def schedule(self, operation_name: str) -> Schedule | None:
        """An operation's rate-limit schedule for a time-left estimate (`ratelimit.Schedule`)."""
        return self._limiters.get(operation_name).schedule()

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
        document, _ = self._call(
            operation,
            path,
            query,
            json,
            parse=lambda response: decode_json(response, operation.name, None, self._redactor.redact),
        )
        return document

    def each(
        self,
        operation_name: str,
        keys: Iterable[K],
        path_params: Callable[[K], Mapping[str, object]],
        params: Mapping[str, object] | None = None,
    ) -> Iterator[tuple[K, Future[Any]]]:
        """One request of an operation per key (`path_params(key)` names it), several in flight in the
        client's pool (`walking.in_order`: `pages_ahead`, or more when the operation's rate and latency
        ask it, `in_flight_wanted`, up to the pool's total), each key with its answer's future in the
        keys' order: `future.result()` is the JSON document or raises the request's error, so the caller
        decides per key what a 404 means. Each request goes through the operation's rate limiter and
        retries as `request` does."""

        def fetch(key: K) -> Any:
            return self.request(operation_name, path_params(key), params)

        return in_order(keys, fetch, self._pages, self._ahead(operation_name))

    def paginate(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
        distinct: bool = False,
    ) -> Iterator[Page]:
        """Yield the non-empty pages of a paged list in order, their records as JSON objects, fetching a
        few ahead (`walking.py`); a list that moved under the walk is walked again.

        `distinct`: a record (by its `id`) comes at most once, even when the list is walked again.
        """
        listing = self.paged(operation_name, path_params, params)
        return listing.walk(listing.json_page, distinct)

    def paged(
        self,
        operation_name: str,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, object] | None = None,
    ) -> PagedList:
        """One paged list of an operation, to fetch its pages one by one (`PagedList.fetch`: the bodies as
        they came) and walk them (`PagedList.walk`). `paginate` walks it with the client's JSON pages."""
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
        return PagedList(self, operation, operation.render_path(path_params), self._query(operation, params))

    def close(self) -> None:
        """Close the connection pool and the threads that fetch pages ahead."""
        self._pages.close()
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # what a paged list asks of its client (`paged_list.Requests`) ----------------------------------------

    def fetch_body(
        self, operation: Operation, path: str, query: dict[str, Any], first_attempt: int
    ) -> tuple[httpx.Response, int]:
        """A page's answer with a success status, through the rate limiter and the HTTP retry policy,
        and the try it came at, counting from `first_attempt`."""
        return self._call(
            operation, path, query, None, parse=lambda response: response, first_attempt=first_attempt
        )

    def walk_pages(self, operation: Operation, fetch: Callable[[int], P], distinct: bool) -> Iterator[P]:
        """The pages `fetch(number)` gives, fetched ahead in the client's pool (`walking.walk_pages`)."""

        def on_loop() -> None:
            self._stats.add(operation.name, errors=1)

        return walk_pages(operation.name, fetch, self._pages, self._ahead(operation.name), on_loop, distinct)

    def walk_tail_pages(
        self, operation: Operation, fetch: Callable[[int], P], first: int, known_last: int
    ) -> Iterator[P]:
        """The last pages of a list sent oldest first, the last first (`walking.walk_tail`)."""
        return walk_tail(operation.name, fetch, self._pages, self._ahead(operation.name), first, known_last)

    def _ahead(self, operation_name: str) -> Callable[[], int]:
        """How many requests a fan or a walk of the operation keeps in flight, asked as each answer is
        taken: `in_flight_wanted`, at least `pages_ahead`, at most `MOST_AHEAD_PER_OPERATION` (or the
        pool's total, when smaller)."""
        return functools.partial(self.in_flight_wanted, operation_name, self._pages_ahead, self._most_ahead)

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

    def _call(
        self,
        operation: Operation,
        path: str,
        query: Mapping[str, Any],
        body: Any,
        *,
        parse: Callable[[httpx.Response], T],
        first_attempt: int = 1,
    ) -> tuple[T, int]:
        """The parsed answer and the try it came at, counting from `first_attempt` (a page whose body
        did not decode is asked for again from the next try: `PagedList.retry_malformed`)."""
        limiter = self._limiters.get(operation.name)
        flow = self._flows.get(operation.name)
        attempt = first_attempt - 1
        while True:
            attempt += 1
            self._raise_if_deferred(operation)
            with flow.slot(limiter.schedule()):  # one of the operation's slots, for this try
                permit = limiter.acquire()
                self._raise_if_deferred(operation)  # deferred while this thread waited for its turn
                self._stats.add(operation.name, requests=1, rate_limit_wait_seconds=permit.waited)
                outcome = self._attempt(operation, path, query, body, parse, permit)
            if not isinstance(outcome, Failed):
                return outcome, attempt
            self.retry_or_raise(operation, outcome, attempt)

    def _raise_if_deferred(self, operation: Operation) -> None:
        with self._deferred_lock:
            deferred = self._deferred.get(operation.name)
        if deferred is not None:
            raise OperationDeferredError(operation.name, deferred.wait, self._patience)

    def _defer_if_beyond_patience(self, operation: Operation, failure: Failure) -> None:
        """A retryable answer whose `Retry-After` asks more than the patience defers the operation: its
        first such answer logs one line, every request of it in this run then raises at once."""
        wait = self._beyond_patience(failure)
        if wait is None:
            return
        error = OperationDeferredError(operation.name, wait, self._patience)
        with self._deferred_lock:
            first = operation.name not in self._deferred
            self._deferred.setdefault(operation.name, error)
        if first:
            self._stats.add(operation.name, errors=1)
            logger.warning("%s: %s", operation.name, error)
        raise error

    def _beyond_patience(self, failure: Failure) -> float | None:
        """The wait the answer asks (`Retry-After`, uncapped) if it is more than the patience."""
        wait = parse_retry_after(failure.retry_after, self._clock.now())
        return wait if wait is not None and wait > self._patience else None

    def deferred(self) -> dict[str, float]:
        """The operations deferred to the next run, with the wait the API asked (seconds)."""
        with self._deferred_lock:
            return {name: error.wait for name, error in self._deferred.items()}

    def retry_or_raise(self, operation: Operation, outcome: Failed, attempt: int) -> None:
        """Wait before the next try if the policy allows one, else raise the failure's exception; a wait
        asked beyond the patience defers the operation (`_defer_if_beyond_patience`)."""
        failure = outcome.failure
        if self._policy.is_retryable(failure, idempotent=operation.idempotent):
            self._defer_if_beyond_patience(operation, failure)
        if not self._policy.should_retry(failure, attempt, idempotent=operation.idempotent):
            self._stats.add(operation.name, errors=1)
            raise outcome.build(attempt) from outcome.cause
        server_delay = self._policy.server_delay(failure, self._clock.now())
        # After a 429 with Retry-After the limiter holds every thread of the operation until then.
        if failure.status == 429 and server_delay is not None:
            delay = 0.0
        else:
            delay = self._policy.delay(failure, attempt, self._clock.now())
        # Each kind of failure is said once a run (a server that cannot be reached fails every request
        # of every resource): its first retry at WARNING, the others at DEBUG, all counted in the stats.
        kind = (failure.kind, failure.status)
        with self._deferred_lock:
            first = kind not in self._retried_kinds
            self._retried_kinds.add(kind)
        logger.log(
            logging.WARNING if first else logging.DEBUG,
            "%s: %s (try %d of %d); retrying %s%s",
            operation.name,
            outcome.summary,
            attempt,
            self._policy.max_attempts,
            f"in {delay:.2f}s" if delay else "when the rate limiter allows",
            " (further retries after this kind of failure are logged at debug level)" if first else "",
        )
        self._stats.add(operation.name, retries=1, backoff_seconds=delay)
        # a request sleeping before its retry is not one in flight: its slot is free meanwhile
        with self._flows.get(operation.name).sleeping():
            self._clock.sleep(delay)

    def _attempt(
        self,
        operation: Operation,
        path: str,
        query: Mapping[str, Any],
        body: Any,
        parse: Callable[[httpx.Response], T],
        permit: Permit,
    ) -> T | Failed:
        """One try: the parsed value, or what went wrong."""
        started = self._clock.monotonic()
        try:
            response = self._http.request(operation.method, path, params=query, json=body)
        except httpx.RequestError as exc:
            url = self._redact_url(request_url(exc, path))
            logger.debug(
                "%s %s %s -> %s after %.3fs",
                operation.name,
                operation.method,
                url,
                type(exc).__name__,
                self._clock.monotonic() - started,
            )
            self._flows.get(operation.name).failed_to_answer()
            return transport_failure(operation, exc, url, self._redactor.redact)
        seconds = self._clock.monotonic() - started
        self._stats.add(operation.name, answers=1, answer_seconds=seconds)
        self._server_time.observe(response.headers.get("Date"), self._clock.now())
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
            self._flows.get(operation.name).answered(seconds, congested=False)
            self._limiters.get(operation.name).on_success(permit)
            try:
                return parse(response)
            except MalformedResponseError as exc:
                return malformed_failure(operation, exc)
        failed = status_failure(operation, response, url, self._redactor.redact)
        foreign = 0
        if response.status_code == 429:
            retry_after = self._policy.server_delay(failed.failure, self._clock.now())
            if self._beyond_patience(failed.failure):
                # the operation is deferred (`retry_or_raise`): the limiter must not hold the operation's
                # other threads for that wait, they are told at once
                retry_after = None
            verdict = self._limiters.get(operation.name).on_rate_limited(
                permit,
                retry_after=retry_after,
                server_limit=int_header(response, "X-RateLimit-Limit"),
            )
            foreign = int(verdict is Verdict.FOREIGN)
            self._stats.add(operation.name, rate_limited=1, foreign_rate_limited=foreign)
        # a 5xx or a 429 of our own pace is a sign of congestion; another app's 429 says nothing of ours
        congested = response.status_code >= 500 or (response.status_code == 429 and not foreign)
        self._flows.get(operation.name).answered(seconds, congested)
        return failed

    def redact(self, text: str) -> str:
        """``text`` without the token or anything that looks like a secret."""
        return self._redactor.redact(text)

    def _redact_url(self, url: object) -> str:
        return self._redactor(redact_url(url))
