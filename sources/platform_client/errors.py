"""Exceptions of the platform client.

    PlatformError                   base of everything the client raises on purpose
    ├── ConfigurationError          bad configuration, or a call refused before anything is sent
    ├── TransportError              no answer: connection refused or dropped, timeout (after retries)
    ├── MalformedResponseError      a success answer that is not the JSON expected (after retries)
    │   └── PagingLoopError         pages that do not advance (the server keeps answering one page)
    ├── ListMovedError              a list kept moving under every walk of it (records shifted pages)
    ├── OperationDeferredError      the API asked to wait longer than the run's patience: that operation
    │                               waits for the next run (this run asks it nothing more)
    └── ApiError                    the API answered an error status; `.status`, `.error_code`
        ├── AuthenticationError     401: token expired or revoked, authorize again
        ├── PermissionDeniedError   403
        │   └── MissingScopeError   403 because the token lacks a scope (`.scopes`)
        ├── NotFoundError           404
        ├── ValidationError         422 (`.details` lists the server's field messages)
        ├── RateLimitedError        429, still after every retry
        ├── ServerError             5xx, still after every retry
        └── TokenExchangeError      the token exchange refused the authorization code

Every message is built from redacted text (`redaction.py`), and no exception keeps an `httpx.Request`
or `httpx.Response`: the request carries the `Authorization` header, and anything kept on an exception
ends up in tracebacks, logs and error trackers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

REAUTHORIZE_HINT = (
    "Authorize the application again and store the new token with `platform-sync auth --code <code>`, "
    "or set SOURCES__PLATFORM__ACCESS_TOKEN."
)


class PlatformError(Exception):
    """Base class. `operation` names the API operation involved, when there is one."""

    def __init__(self, message: str, *, operation: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.operation = operation

    def __str__(self) -> str:
        return self.message


class ConfigurationError(PlatformError):
    """The configuration or the call is invalid; nothing was sent."""


class TransportError(PlatformError):
    """No usable HTTP answer (connection error, dropped connection, timeout), after `attempts` tries."""

    def __init__(self, message: str, *, operation: str | None = None, attempts: int = 1) -> None:
        super().__init__(message, operation=operation)
        self.attempts = attempts


class MalformedResponseError(PlatformError):
    """A success status whose body is not the JSON document expected (e.g. a truncated page)."""

    def __init__(
        self, message: str, *, operation: str | None = None, page: int | None = None, attempts: int = 1
    ) -> None:
        super().__init__(message, operation=operation)
        self.page = page
        self.attempts = attempts


class PagingLoopError(MalformedResponseError):
    """The server's paging does not advance; retrying would not help, so it is never retried."""


class ListMovedError(PlatformError):
    """A paged list changed under every walk of it (its total changed, a record came twice, a page was
    shorter than the total promised): records may have shifted past a page boundary unseen."""


class OperationDeferredError(PlatformError):
    """The API asked this operation to wait (`Retry-After`) longer than the run's patience
    (`patience_seconds`): the operation is deferred to the next run, and this client asks it nothing more.
    `.wait` is the wait asked, in seconds."""

    def __init__(self, operation: str, wait: float, patience: float) -> None:
        super().__init__(
            f"deferred to the next run: the API asked {operation} to wait {wait:,.0f} s (Retry-After), "
            f"more than this run's patience of {patience:,.0f} s (patience_seconds); the other resources "
            "went on",
            operation=operation,
        )
        self.wait = wait


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """What the client understood of an error answer (contracts part 1: `status`, `error`, `message`)."""

    message: str
    error_code: str | None = None
    details: tuple[tuple[str, str], ...] = ()
    scope: str | None = None


class ApiError(PlatformError):
    """The API answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None,
        status: int,
        error_code: str | None = None,
        server_message: str | None = None,
        url: str | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message, operation=operation)
        self.status = status
        self.error_code = error_code
        self.server_message = server_message
        self.url = url  # redacted
        self.attempts = attempts


class AuthenticationError(ApiError):
    """401: the token expired or was revoked."""


class PermissionDeniedError(ApiError):
    """403 that is not (recognisably) about a scope: the user may not read this resource."""


class MissingScopeError(PermissionDeniedError):
    """403 because the token was not granted a scope the operation needs."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None,
        scopes: Sequence[str],
        error_code: str | None = None,
        server_message: str | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(
            message,
            operation=operation,
            status=403,
            error_code=error_code,
            server_message=server_message,
            url=url,
        )
        self.scopes = tuple(scopes)


class NotFoundError(ApiError):
    """404: the resource (an id from the configuration, usually) does not exist."""


class ValidationError(ApiError):
    """422: the server refused the parameters or body; `details` are (field, message) pairs."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None,
        details: Sequence[tuple[str, str]] = (),
        error_code: str | None = None,
        server_message: str | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(
            message,
            operation=operation,
            status=422,
            error_code=error_code,
            server_message=server_message,
            url=url,
        )
        self.details = tuple(details)


class RateLimitedError(ApiError):
    """429 on every try: the budget for the operation is used by something else, or far too small."""


class ServerError(ApiError):
    """5xx on every try."""


class TokenExchangeError(ApiError):
    """The token exchange (`{auth_url}/oauth/token`) did not return a token."""


def parse_error_body(content: bytes, reason: str, redact: Callable[[str], str]) -> ErrorBody:
    """Read the error body of contracts part 1; fall back to the status text when it is not JSON.

    Everything taken from the body goes through `redact`: a server may echo parts of the request.
    """
    try:
        data = json.loads(content)
    except ValueError:
        return ErrorBody(message=redact(_plain_text(content) or reason))
    if not isinstance(data, dict):
        return ErrorBody(message=redact(reason))
    message = data.get("message")
    code = data.get("error")
    scope = data.get("scope")
    details: list[tuple[str, str]] = []
    raw_details = data.get("details")
    if isinstance(raw_details, list):
        for detail in raw_details:
            if isinstance(detail, dict):
                details.append((redact(str(detail.get("field", ""))), redact(str(detail.get("message", "")))))
            else:
                details.append(("", redact(str(detail))))
    return ErrorBody(
        message=redact(message) if isinstance(message, str) and message else redact(reason),
        error_code=code if isinstance(code, str) else None,
        details=tuple(details),
        scope=redact(scope) if isinstance(scope, str) and scope else None,
    )


def _plain_text(content: bytes) -> str | None:
    # A short plain-text body is the server's message (e.g. "missing scope in request headers"); an HTML
    # page from a proxy is not, and is replaced by the status text.
    text = content.decode("utf-8", errors="replace").strip()
    if not text or len(text) > 300 or text.startswith("<"):
        return None
    return " ".join(text.split())


def _looks_like_scope_problem(body: ErrorBody) -> bool:
    # The sandbox names the scope in `scope`; the real API's documented text is "missing scope in
    # request headers". Other 403s (community ids of another user, no permission) must not send the
    # user through a pointless re-authorization.
    return body.scope is not None or "scope" in body.message.lower()


def error_for_status(
    *,
    operation: str,
    scopes: Collection[str],
    status: int,
    body: ErrorBody,
    url: str,
    attempts: int = 1,
    note: str = "",
) -> ApiError:
    """Map an error answer of `operation` to the exception of the taxonomy, with an actionable message.

    `attempts` is the number of tries made; `note` is appended to the message.
    """
    error = _error_for_status(
        operation=operation, scopes=scopes, status=status, body=body, url=url, attempts=attempts
    )
    if note:
        error.message += note
        error.args = (error.message,)
    return error


def tries(count: int) -> str:
    """`1 try`, `6 tries`."""
    return f"{count} try" if count == 1 else f"{count} tries"


def _error_for_status(
    *, operation: str, scopes: Collection[str], status: int, body: ErrorBody, url: str, attempts: int
) -> ApiError:
    said = f"{status} {body.error_code}: {body.message}" if body.error_code else f"{status}: {body.message}"
    common = {
        "operation": operation,
        "error_code": body.error_code,
        "server_message": body.message,
        "url": url,
    }
    if status == 401:
        return AuthenticationError(
            f"{operation}: the access token was rejected ({said}); it has expired or was revoked. "
            + REAUTHORIZE_HINT,
            status=status,
            attempts=attempts,
            **common,
        )
    if status == 403:
        if _looks_like_scope_problem(body):
            needed = sorted({body.scope} if body.scope else set(scopes))
            names = " and ".join(needed) if needed else "(no scope is documented for it)"
            return MissingScopeError(
                f"{operation} needs the scope {names}, which the access token was not granted ({said}). "
                f"Authorize the application again including {names}, then store the new token with "
                "`platform-sync auth --code <code>`.",
                scopes=needed,
                **common,
            )
        return PermissionDeniedError(
            f"{operation}: the user may not access this resource ({said}) at {url}. Check that the ids "
            "in the configuration belong to this account and that the user has permission.",
            status=status,
            attempts=attempts,
            **common,
        )
    if status == 404:
        return NotFoundError(
            f"{operation}: not found ({said}) at {url}. Check the ids in the configuration.",
            status=status,
            attempts=attempts,
            **common,
        )
    if status == 422:
        detail_text = "; ".join(f"{name}: {text}" if name else text for name, text in body.details)
        return ValidationError(
            f"{operation}: the API refused the request ({said})"
            + (f" [{detail_text}]" if detail_text else "")
            + f" at {url}.",
            details=body.details,
            **common,
        )
    if status == 429:
        return RateLimitedError(
            f"{operation}: still rate limited after {tries(attempts)} ({said}). Something else may be "
            "using the same token's budget: lower `rate_limits` for this operation in [sources.platform] "
            "or run again later.",
            status=status,
            attempts=attempts,
            **common,
        )
    if status >= 500:
        return ServerError(
            f"{operation}: the API failed after {tries(attempts)}, last with {said} at {url}. It is the "
            "server's fault, not the configuration's: run again later, or raise `max_retries` in "
            "[sources.platform].",
            status=status,
            attempts=attempts,
            **common,
        )
    return ApiError(
        f"{operation}: unexpected answer {said} at {url}.", status=status, attempts=attempts, **common
    )
