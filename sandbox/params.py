"""Parsing and validating query parameters and JSON bodies.

A `Query` collects every problem before failing, so one 422 names all bad fields in `details`.
Unknown parameters are ignored (the real API ignores them too). Numbers are ASCII integers in
[min, 2**31 - 1]: anything bigger is a validation error rather than an overflow deeper down.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from sandbox.errors import ApiError, Detail, validation_error

INT_MAX = 2**31 - 1
MAX_STRING = 1000
DEFAULT_ITEMS_PER_PAGE = 10
MAX_ITEMS_PER_PAGE = 100
MAX_BODY_BYTES = 1 << 20

_INT = re.compile(r"[+-]?[0-9]+")
# Contracts part 1: YYYY-MM-DD, ISO 8601 with Z or an offset, or naive (taken as UTC). The regex keeps
# out the other forms fromisoformat would accept (week dates, basic format without dashes).
_DATE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?(?:Z|z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


@dataclass(frozen=True)
class Paging:
    page: int
    items_per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.items_per_page


def parse_datetime(text: str) -> datetime | None:
    """A date query value as an aware UTC datetime, or None when it is not an accepted form."""
    if not _DATE.fullmatch(text):
        return None
    try:
        value = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 falls before year 1 in UTC
        return None


class Query:
    """Typed access to query parameters; call `done()` to raise the collected 422."""

    def __init__(self, params: Mapping[str, str]):
        self._params = params
        self.errors: list[Detail] = []

    def _fail(self, name: str, message: str) -> None:
        self.errors.append({"field": name, "message": message})

    def _raw(self, name: str, required: bool) -> str | None:
        value = self._params.get(name)
        if value is None and required:
            self._fail(name, "is required")
        return value

    def integer(
        self, name: str, *, default: int | None = None, required: bool = False, minimum: int = 1
    ) -> int | None:
        raw = self._raw(name, required)
        if raw is None:
            return default
        text = raw.strip()
        if not _INT.fullmatch(text):
            self._fail(name, "must be an integer")
            return default
        # More than 12 digits is out of range anyway; not converting sidesteps int()'s digit limit.
        if len(text.lstrip("+-")) > 12 or not minimum <= int(text) <= INT_MAX:
            self._fail(name, f"must be between {minimum} and {INT_MAX}")
            return default
        return int(text)

    def date(self, name: str, *, required: bool = False) -> datetime | None:
        raw = self._raw(name, required)
        if raw is None:
            return None
        value = parse_datetime(raw.strip())
        if value is None:
            self._fail(name, "must be a date (YYYY-MM-DD) or an ISO 8601 datetime")
        return value

    def enum(self, name: str, choices: Collection[str], *, default: str | None = None) -> str | None:
        raw = self._raw(name, False)
        if raw is None:
            return default
        if raw not in choices:
            self._fail(name, "must be one of " + ", ".join(sorted(choices)))
            return default
        return raw

    def boolean(self, name: str) -> bool | None:
        raw = self._raw(name, False)
        if raw is None:
            return None
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        self._fail(name, "must be true or false")
        return None

    def string(self, name: str) -> str | None:
        """A free-text filter; an empty value means no filter."""
        raw = self._raw(name, False)
        if raw is None or raw == "":
            return None
        if len(raw) > MAX_STRING:
            self._fail(name, f"must be at most {MAX_STRING} characters")
            return None
        return raw

    def paging(self, *, required: bool = False) -> Paging:
        page = self.integer("page", default=1, required=required)
        size = self.integer("itemsPerPage", default=DEFAULT_ITEMS_PER_PAGE, required=required)
        # Contracts part 1: a larger page size is clamped, not refused; the envelope says the clamp.
        return Paging(page or 1, min(size or DEFAULT_ITEMS_PER_PAGE, MAX_ITEMS_PER_PAGE))

    def done(self) -> None:
        if self.errors:
            raise validation_error(self.errors)


def path_int(name: str, raw: str) -> int:
    """An integer path segment (community id, delivery id) or a 422."""
    query = Query({name: raw})
    value = query.integer(name, required=True, minimum=0)
    query.done()
    assert value is not None
    return value


def parse_json_body(raw: bytes) -> dict[str, Any]:
    """A request body that must be one JSON object: 400 when it is not JSON, 422 when not an object."""
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError(413, "request body too large")
    if not raw.strip():
        raise validation_error([{"field": "body", "message": "a JSON object is required"}])
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"malformed JSON body: {exc}") from None
    if not isinstance(body, dict):
        raise validation_error([{"field": "body", "message": "must be a JSON object"}])
    return body


class BodyCheck:
    """Type checks for JSON request bodies, collecting `details` like `Query` does."""

    def __init__(self) -> None:
        self.errors: list[Detail] = []

    def field(
        self, obj: Mapping[str, Any], name: str, kind: str, *, required: bool = False, prefix: str = ""
    ) -> Any:
        """`obj[name]` when it has JSON type `kind` (string, integer, number, boolean, object, array)."""
        value = obj.get(name)
        path = prefix + name
        if value is None:
            if required:
                self.errors.append({"field": path, "message": "is required"})
            return None
        if not _is_kind(value, kind):
            self.errors.append(
                {"field": path, "message": f"must be a{'n' if kind[0] in 'aeio' else ''} {kind}"}
            )
            return None
        if kind == "string" and len(value) > MAX_STRING:
            self.errors.append({"field": path, "message": f"must be at most {MAX_STRING} characters"})
            return None
        return value

    def fail(self, path: str, message: str) -> None:
        self.errors.append({"field": path, "message": message})

    def done(self) -> None:
        if self.errors:
            raise validation_error(self.errors)


def _is_kind(value: Any, kind: str) -> bool:
    # bool is an int in Python but never a JSON number.
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    raise ValueError(kind)
