"""What one try produced: the decoded JSON, or a `Failed` record for the retry loop.

A `Failed` carries what the retry policy needs (`Failure`), a line for the log, and a builder for the
exception to raise if this try turns out to be the last, built then, so that the message can say how many
tries were made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import orjson

from sources.platform_client.errors import (
    MalformedResponseError,
    PlatformError,
    TransportError,
    error_for_status,
    parse_error_body,
    tries,
)
from sources.platform_client.operations import Operation
from sources.platform_client.retry import Failure, FailureKind

# Appended to the final error of a request that changes data and may have reached the server.
UNSAFE_NOTE = (
    " This request changes data and was not repeated because the server may have applied it: check "
    "before sending it again."
)


@dataclass(frozen=True, slots=True)
class Failed:
    """A failed try (see module docstring)."""

    failure: Failure
    summary: str
    build: Callable[[int], PlatformError]
    cause: BaseException | None = None


def classify_transport(exc: httpx.RequestError) -> FailureKind:
    """The kind of failure an httpx exception is."""
    # Only these prove the request never left; after anything else the server may have seen it.
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return FailureKind.CONNECT
    if isinstance(exc, httpx.TimeoutException):
        return FailureKind.TIMEOUT
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        return FailureKind.DROPPED
    if isinstance(exc, httpx.DecodingError):
        return FailureKind.MALFORMED
    return FailureKind.INVALID  # LocalProtocolError, UnsupportedProtocol, ...: asking again won't help


class Body(Protocol):
    """A success answer's body and status: an `httpx.Response`, or a page fetched (`client.RawPage`)."""

    @property
    def content(self) -> bytes: ...
    @property
    def status_code(self) -> int: ...


def decode_json(response: Body, operation: str, page: int | None, redact: Callable[[str], str]) -> Any:
    """The JSON document of a success answer; `MalformedResponseError` if it is not JSON."""
    try:
        return _loads_json(response.content)
    except ValueError:
        snippet = redact(response.content[:80].decode("utf-8", errors="replace"))
        where = f" page {page}" if page is not None else ""
        raise MalformedResponseError(
            f"{operation}:{where} the answer ({response.status_code}, {len(response.content)} bytes) is not "
            f"JSON, perhaps truncated: {snippet!r}",
            operation=operation,
            page=page,
        ) from None


def _loads_json(content: bytes) -> Any:
    """A JSON document; `ValueError` if the bytes are not one (or nest deeper than Python parses)."""
    # orjson parses a page several times faster than the standard library (bench/README.md), but
    # refuses what Python's own parser takes (NaN, Infinity, a lone surrogate, nesting beyond 255
    # levels) and turns an integer beyond 64 bits into a float without a
    # word (2**70 becomes 1.1805916207174113e+21). Those documents are parsed the slow way, which keeps
    # every integer exact, rather than called malformed; a record holding one is quarantined later
    # (`sources/platform/unreadable.py`).
    try:
        if _LONG_DIGITS.search(content) is None:
            return orjson.loads(content)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(content)
    except RecursionError:
        raise ValueError("the JSON nests deeper than Python's parser goes") from None


# 19 digits in a row: perhaps an integer beyond 64 bits (or a long fraction, parsed the same either way).
_LONG_DIGITS = re.compile(rb"\d{19}")


def status_failure(
    operation: Operation, response: httpx.Response, url: str, redact: Callable[[str], str]
) -> Failed:
    """An error status, with the taxonomy's exception for it."""
    failure = Failure(FailureKind.STATUS, response.status_code, response.headers.get("Retry-After"))
    body = parse_error_body(response.content, response.reason_phrase, redact)
    # A POST answered 5xx may have been applied, which is why it is not retried: say so.
    note = UNSAFE_NOTE if not operation.idempotent and response.status_code >= 500 else ""

    def build(attempts: int) -> PlatformError:
        return error_for_status(
            operation=operation.name,
            scopes=operation.scopes,
            status=response.status_code,
            body=body,
            url=url,
            attempts=attempts,
            note=note,
        )

    return Failed(failure, f"answered {response.status_code} {body.message}", build)


def transport_failure(
    operation: Operation, exc: httpx.RequestError, url: str, redact: Callable[[str], str]
) -> Failed:
    """No usable answer: connection refused or dropped, timeout, broken encoding."""
    kind = classify_transport(exc)
    what = f"{type(exc).__name__}: {redact(str(exc))}" if str(exc) else type(exc).__name__
    if kind is FailureKind.INVALID:
        return Failed(
            Failure(kind),
            what,
            lambda _: TransportError(
                f"{operation.name}: cannot send to {url} ({what})", operation=operation.name
            ),
            cause=exc,
        )
    note = "" if kind is FailureKind.CONNECT or operation.idempotent else UNSAFE_NOTE

    def build(attempts: int) -> PlatformError:
        return TransportError(
            f"{operation.name}: no answer from {url} after {tries(attempts)} (last: {what}). "
            "Check base_url and the network, or raise `timeout`/`max_retries`." + note,
            operation=operation.name,
            attempts=attempts,
        )

    return Failed(Failure(kind), what, build, cause=exc)


def malformed_failure(operation: Operation, exc: MalformedResponseError) -> Failed:
    """A success status whose body is not what was expected."""
    # A POST whose 2xx body is broken was applied: it is never repeated, and the message says so.
    note = "" if operation.idempotent else UNSAFE_NOTE.replace("may have applied", "has applied")

    def build(attempts: int) -> PlatformError:
        advice = " The server keeps sending broken answers: run again later." if attempts > 1 else ""
        return MalformedResponseError(
            f"{exc.message} (after {tries(attempts)}).{advice}{note}",
            operation=operation.name,
            page=exc.page,
            attempts=attempts,
        )

    return Failed(Failure(FailureKind.MALFORMED), exc.message, build)


def request_url(exc: httpx.RequestError, fallback: str) -> object:
    """The URL of the request that failed, or `fallback` when httpx attached none."""
    try:
        return exc.request.url
    except RuntimeError:  # httpx raises this when no request is attached
        return fallback


def int_header(response: httpx.Response, name: str) -> int | None:
    """A header's integer value; None when absent or not an integer."""
    value = response.headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
