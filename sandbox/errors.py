"""The one error body of the sandbox (contracts part 1) and the exception that carries it.

Every failure the HTTP layer answers, from a bad query parameter to an unknown path, becomes
`{"status": <int>, "error": "<code>", "message": "<text>"}` (plus `scope` on a missing scope and
`details` on a validation error), so the client needs exactly one error parser.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

# The contract fixes the set of codes; statuses it does not name (405, 413) take the nearest one.
ERROR_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "bad_request",
    413: "bad_request",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    502: "bad_gateway",
    503: "unavailable",
}

Detail = dict[str, str]


def code_for(status: int) -> str:
    """The contract's error code for an HTTP status (4xx default to `bad_request`)."""
    return ERROR_CODES.get(status, "bad_request" if status < 500 else "internal_error")


class ApiError(Exception):
    """An answer other than success; `headers` go out with it (Allow, Retry-After, ...)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        scope: str | None = None,
        details: list[Detail] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code or code_for(status)
        self.message = message
        self.scope = scope
        self.details = details or []
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The JSON error body of contracts part 1."""
        body: dict[str, Any] = {"status": self.status, "error": self.code, "message": self.message}
        if self.scope is not None:
            body["scope"] = self.scope
        if self.details:
            body["details"] = self.details
        return body


def validation_error(details: list[Detail], message: str = "validation error") -> ApiError:
    """A 422 listing every offending field, so a caller fixes all of them in one go."""
    return ApiError(422, message, details=details)


class JSONResponse(Response):
    """orjson-serialised response: the sandbox's hot path is serialising pages of records."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def error_response(error: ApiError, extra_headers: dict[str, str] | None = None) -> JSONResponse:
    headers = dict(error.headers)
    if extra_headers:
        headers.update(extra_headers)
    return JSONResponse(error.body(), status_code=error.status, headers=headers)
