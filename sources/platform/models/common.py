"""Building blocks shared by all models: the base model, timestamps, money, uuids.

The two scalar types that need more than pydantic's defaults, ``Timestamp`` and ``DecimalValue``, are
plain validators written for speed (they run for every money value and timestamp of every record).
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainValidator, StringConstraints, TypeAdapter, ValidationError


class ApiModel(BaseModel):
    """Base of every API shape: field names are the API's keys; unknown fields are kept."""

    model_config = ConfigDict(extra="allow")


# --- timestamps ---

_fromisoformat = datetime.fromisoformat
_lax_datetime = TypeAdapter(datetime)  # pydantic's own parser: more ISO forms, unix numbers

TIMESTAMP_FORMS = (
    "ISO 8601 with Z or an offset, with or without fractional seconds; 'YYYY-MM-DDTHH:MM:SS' or "
    "'YYYY-MM-DD HH:MM:SS' without zone (taken as UTC); 'YYYY-MM-DD' (midnight UTC)"
)


def parse_timestamp(value: Any) -> datetime:
    """Any timestamp form the API uses, as an aware UTC datetime; a value without zone is UTC."""
    if type(value) is str:
        try:
            dt = _fromisoformat(value)
        except ValueError:
            dt = _fallback_timestamp(value)
    elif isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day, tzinfo=UTC)
    else:
        dt = _fallback_timestamp(value)
    tz = dt.tzinfo
    if tz is UTC:
        return dt
    if tz is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def _fallback_timestamp(value: Any) -> datetime:
    if isinstance(value, bool | bytes | bytearray):
        raise ValueError(f"expected a timestamp: {TIMESTAMP_FORMS}")
    try:
        return _lax_datetime.validate_python(value.strip() if isinstance(value, str) else value)
    except ValidationError:
        raise ValueError(f"expected a timestamp: {TIMESTAMP_FORMS}") from None


def parse_date_or_timestamp(value: Any) -> datetime:
    """``parse_timestamp`` for the fields whose documented form may be date-only (the transfer dates)."""
    return parse_timestamp(value)


# An aware UTC datetime parsed from any form of ``TIMESTAMP_FORMS`` (and unix seconds/milliseconds).
Timestamp = Annotated[datetime, PlainValidator(parse_timestamp)]
# The same, for a field the spec documents as possibly date-only (spec 1, "the transfer dates").
DateOrTimestamp = Annotated[datetime, PlainValidator(parse_date_or_timestamp)]


# --- the spec's wire forms, enforced by the strict validation (``parse.py``) ---
# Each record is first validated against these: a value in another form (a number sent as a string, a
# timestamp without zone) fails it and the record is read by ``tolerant.py``, which records the departure.

_CANONICAL_INSTANT = "an ISO 8601 timestamp with 'T' and a zone"


def canonical_timestamp(value: Any) -> datetime:
    if type(value) is str and len(value) > 16 and value[10] == "T":
        dt = _fromisoformat(value)
        tz = dt.tzinfo
        if tz is UTC:
            return dt
        if tz is not None:
            return dt.astimezone(UTC)
    elif isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC)
    raise ValueError(f"expected {_CANONICAL_INSTANT}")


def canonical_date_or_timestamp(value: Any) -> datetime:
    if type(value) is str and len(value) == 10:
        day = date.fromisoformat(value)
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    return canonical_timestamp(value)


def canonical_decimal(value: Any) -> Decimal:
    if type(value) is float or type(value) is int:
        return parse_decimal(value)
    raise ValueError("expected a JSON number")


CANONICAL_FORMS: dict[Any, Any] = {
    Timestamp: Annotated[datetime, PlainValidator(canonical_timestamp)],
    DateOrTimestamp: Annotated[datetime, PlainValidator(canonical_date_or_timestamp)],
}


# --- decimals ---

# Money values repeat a lot (prices, zero fees): converting a float through its shortest repr is the
# costly part, so conversions are memoised in a bounded table.
_DECIMALS: dict[float, Decimal] = {}
_DECIMALS_MAX = 100_000
# The warehouse's decimal column (dlt's default, DECIMAL(38, 9)) holds 29 digits before the point: a value
# beyond them would fail its table's whole load, so it is no number this column can take (issue 48).
DECIMAL_LIMIT = Decimal(10) ** 29


def parse_decimal(value: Any) -> Decimal:
    """A JSON number (or a numeric string) as an exact ``Decimal``: ``9.7`` becomes ``Decimal('9.7')``."""
    kind = type(value)
    if kind is float or kind is int:
        cached = _DECIMALS.get(value)
        if cached is not None:
            return cached
        if kind is float and not math.isfinite(value):
            raise ValueError("expected a finite number")
        result = Decimal(repr(value)) if kind is float else Decimal(value)
        if abs(result) >= DECIMAL_LIMIT:
            raise ValueError("expected a number of at most 29 digits before the point")
        if len(_DECIMALS) >= _DECIMALS_MAX:
            _DECIMALS.clear()
        _DECIMALS[value] = result
        return result
    if kind is Decimal:
        result = value
    elif kind is str:
        try:
            result = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError("expected a number") from None
    else:
        raise ValueError("expected a number")
    if not result.is_finite():
        raise ValueError("expected a finite number")
    if abs(result) >= DECIMAL_LIMIT:
        raise ValueError("expected a number of at most 29 digits before the point")
    return result


# A number loaded as ``decimal``: the ``value`` of ``Money`` and money-like amounts without currency.
DecimalValue = Annotated[Decimal, PlainValidator(parse_decimal)]
Amount = DecimalValue
CANONICAL_FORMS[DecimalValue] = Annotated[Decimal, PlainValidator(canonical_decimal)]

# A uuid kept as its text form (the spec's ``uuid`` type).
Uuid = Annotated[
    str,
    StringConstraints(
        pattern=r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
    ),
]

# A free key-value map: loaded as one ``json`` column instead of being flattened.
FreeMap = dict[str, Any]


class Money(ApiModel):
    currency: str
    value: DecimalValue


class IdName(ApiModel):
    id: str
    name: str


class CodeDescription(ApiModel):
    code: str
    description: str
