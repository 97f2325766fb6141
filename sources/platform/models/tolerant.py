"""Reading a record that departs from the spec: load it as faithfully as its columns allow, and say how.

``parse_record`` first validates a record strictly (the spec's types, its enumerations, no unknown field,
timestamps with a zone, numbers as JSON numbers): most records pass, at the speed of one pydantic call.
A record that does not is walked here, field by field, against the same model:

- null, or a missing key, in a field the spec does not mark nullable: the column gets null (``null``,
  ``missing``);
- an enumeration value the spec does not list: kept as it came, as text (``unlisted_value``);
- a field the spec does not list, at any depth: kept, so dlt adds its column (``unlisted_field``);
- a value of another JSON type that converts without loss (``"12.50"``, ``3.0`` for a count, ``1`` or
  ``"true"`` for a boolean, a timestamp without zone, with a space or date-only): converted
  (``converted``);
- a value that cannot be converted (``"n/a"`` for a number, ``""`` for a timestamp, text for an
  object): the column gets null and the original is kept in the departure (``unconvertible``);
- a text not of the documented format (a uuid that is not one): kept as text (``malformed``).

Every departure names its field path in the API's keys, list elements written ``[]``
(``items[].unitValue.value``). The walk gives the same row as the strict validation for a record that
departs in nothing (the tests check it).
"""

from __future__ import annotations

import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .common import (
    DECIMAL_LIMIT,
    DateOrTimestamp,
    DecimalValue,
    Timestamp,
    Uuid,
    parse_decimal,
    parse_timestamp,
)

KINDS = (
    "null",
    "missing",
    "unlisted_value",
    "unlisted_field",
    "converted",
    "unconvertible",
    "malformed",
    "unloadable_name",  # records.py: a field whose name is no column of its own (empty, or another's)
    "mended",  # records.py: a value that could not be loaded as sent, replaced (`unreadable.mend`)
)

# Free-text personal fields: a departure there records its kind only, never the value.
PERSONAL_KEYS = frozenset(
    {
        "name", "email", "document", "phone", "phone2", "phone3", "cellphone", "telephone", "telephone2",
        "tel", "tel2", "cell", "street", "number", "complement", "neighborhood", "district", "zipCode",
        "postalCode", "text", "author", "requesterName", "taxId", "companyName", "ie", "im",
        "invoiceCustomerName", "invoiceCustomerEmail", "invoiceCustomerDocument", "phoneNumber",
        "customFields", "motive", "title", "description", "inviteKey",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Departure:
    """One way a record departs from the spec."""

    path: str  # the API's keys, list elements as ``[]``: ``items[].unitValue.value``
    kind: str  # one of ``KINDS``
    value: Any = None  # as received, for unlisted_value, converted, unconvertible and malformed

    def __str__(self) -> str:
        shown = "" if self.value is None else f" ({self.value!r})"
        return f"{self.path}: {self.kind}{shown}"


class _Unconvertible(ValueError):
    pass


_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_CANONICAL_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_TRUE, _FALSE = frozenset({"true", "1"}), frozenset({"false", "0"})

# A scalar's conversion: the value for the row and whether it was converted; raises _Unconvertible.
Convert = Callable[[Any], tuple[Any, bool]]


def _text(value: Any) -> tuple[Any, bool]:
    if type(value) is str:
        return value, False
    if type(value) is bool:
        return ("true" if value else "false"), True
    if isinstance(value, int | float) and not (isinstance(value, float) and not math.isfinite(value)):
        return str(value), True
    raise _Unconvertible


_INT64 = (-(2**63), 2**63 - 1)


def _integer(value: Any) -> tuple[Any, bool]:
    if type(value) is int:
        return value, False
    converted: int | None = None
    if type(value) is float and value.is_integer():
        converted = int(value)
    elif type(value) is str:
        number = _decimal_text(value)
        if number == number.to_integral_value():
            converted = int(number)
    # a whole number that is no 64-bit integer (`-3.4e38`, "1e30") cannot load as one
    if converted is not None and _INT64[0] <= converted <= _INT64[1]:
        return converted, True
    raise _Unconvertible


def _float(value: Any) -> tuple[Any, bool]:
    if type(value) is float and math.isfinite(value):
        return value, False
    if type(value) is int:
        return float(value), False  # a JSON number either way
    if type(value) is str:
        return float(_decimal_text(value)), True
    raise _Unconvertible


def _decimal(value: Any) -> tuple[Any, bool]:
    if type(value) is int or type(value) is float:
        try:
            return parse_decimal(value), False
        except ValueError:
            raise _Unconvertible from None
    if type(value) is str:
        return _decimal_text(value), True
    raise _Unconvertible


def _decimal_text(text: str) -> Decimal:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        raise _Unconvertible from None
    if not number.is_finite() or abs(number) >= DECIMAL_LIMIT:
        raise _Unconvertible
    return number


def _boolean(value: Any) -> tuple[Any, bool]:
    if type(value) is bool:
        return value, False
    if type(value) in (int, float) and value in (0, 1):
        return bool(value), True
    if type(value) is str:
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE, True
    raise _Unconvertible


def _instant(date_only_allowed: bool) -> Convert:
    def convert(value: Any) -> tuple[Any, bool]:
        if isinstance(value, bool) or not isinstance(value, str | int | float | datetime | date):
            raise _Unconvertible
        try:
            parsed = parse_timestamp(value)
        except ValueError:
            raise _Unconvertible from None
        if isinstance(value, str):
            canonical = _CANONICAL_INSTANT.fullmatch(value) or (
                date_only_allowed and _DATE_ONLY.fullmatch(value)
            )
            return parsed, not canonical
        return parsed, not (isinstance(value, datetime) and value.tzinfo is not None)

    return convert


def _uuid(value: Any) -> tuple[Any, bool]:
    text, converted = _text(value)
    if not converted and not _UUID.fullmatch(text):
        raise _Malformed(text)
    return text, converted


class _Malformed(ValueError):
    def __init__(self, kept: Any) -> None:
        super().__init__(kept)
        self.kept = kept


def _enum(allowed: frozenset[str]) -> Convert:
    def convert(value: Any) -> tuple[Any, bool]:
        if type(value) is str:
            if value in allowed:
                return value, False
            raise _Unlisted(value)
        text, _ = _text(value)
        raise _Unlisted(text)

    return convert


class _Unlisted(ValueError):
    def __init__(self, kept: Any) -> None:
        super().__init__(kept)
        self.kept = kept


def _free_map(value: Any) -> tuple[Any, bool]:
    if type(value) is dict:
        return dict(value), False
    raise _Unconvertible


# --- the walk's plan, compiled once per model ---


@dataclass(frozen=True)
class _Field:
    key: str
    nullable: bool
    convert: Convert | None = None  # a scalar
    shape: _Shape | None = None  # an object, or the items of a list of objects
    is_list: bool = False


@dataclass(frozen=True)
class _Shape:
    fields: tuple[_Field, ...]
    keys: frozenset[str]


@cache
def shape_of(model: type[BaseModel]) -> _Shape:
    fields = tuple(
        _field(name, full_annotation(info), info.is_required()) for name, info in model.model_fields.items()
    )
    return _Shape(fields, frozenset(model.model_fields))


def full_annotation(info: FieldInfo) -> Any:
    """The field's type as written (pydantic moves a top-level ``Annotated``'s metadata aside)."""
    return Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation


def _field(key: str, annotation: Any, required: bool) -> _Field:
    tp, nullable = _strip_optional(annotation)
    nullable = nullable or not required
    if get_origin(tp) is list:
        item, _ = _strip_optional(get_args(tp)[0])
        if isinstance(item, type) and issubclass(item, BaseModel):
            return _Field(key, nullable, shape=shape_of(item), is_list=True)
        return _Field(key, nullable, convert=_converter(item, key), is_list=True)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _Field(key, nullable, shape=shape_of(tp))
    return _Field(key, nullable, convert=_converter(tp, key))


_ANNOTATED: tuple[tuple[Any, Convert], ...] = (
    (Timestamp, _instant(False)),
    (DateOrTimestamp, _instant(True)),
    (DecimalValue, _decimal),
    (Uuid, _uuid),
)
_PLAIN: dict[Any, Convert] = {str: _text, int: _integer, float: _float, bool: _boolean, Decimal: _decimal}


def _converter(tp: Any, key: str) -> Convert:
    for annotated, convert in _ANNOTATED:
        if tp == annotated:
            return convert
    if get_origin(tp) is Literal:
        return _enum(frozenset(get_args(tp)))
    if tp in _PLAIN:
        return _PLAIN[tp]
    if tp is dict or get_origin(tp) is dict:
        return _free_map
    raise TypeError(f"{key}: no tolerant reading for {tp!r}")


def _strip_optional(tp: Any) -> tuple[Any, bool]:
    args = get_args(tp)
    if (get_origin(tp) is types.UnionType or get_origin(tp) is typing.Union) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]), True  # noqa: UP007
    if get_origin(tp) is Annotated and tp not in (a for a, _ in _ANNOTATED):
        return _strip_optional(get_args(tp)[0])
    return tp, False


# --- the walk ---


def read_tolerantly(model: type[BaseModel], raw: dict[str, Any]) -> tuple[dict[str, Any], list[Departure]]:
    """The row of ``raw`` (a JSON object) and every way it departs from ``model``."""
    departures: list[Departure] = []
    return _object(shape_of(model), raw, "", departures), departures


def _object(shape: _Shape, raw: dict[str, Any], prefix: str, out: list[Departure]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for field in shape.fields:
        path = prefix + field.key
        if field.key not in raw:
            if not field.nullable:
                out.append(Departure(path, "missing"))
            if field.convert is not None and not field.is_list:
                row[field.key] = None
            continue
        value = raw[field.key]
        if value is None:
            if not field.nullable:
                out.append(Departure(path, "null"))
            if field.convert is not None and not field.is_list:
                row[field.key] = None
            continue  # a null object or list is left out of the row (see parse._prune)
        read = _list(field, value, path, out) if field.is_list else _one(field, value, path, out)
        if read is not None or (field.convert is not None and not field.is_list):
            row[field.key] = read
    for key, value in raw.items():
        if key not in shape.keys:
            out.append(Departure(prefix + key, "unlisted_field"))
            row[key] = value
    return row


def _one(field: _Field, value: Any, path: str, out: list[Departure]) -> Any:
    if field.shape is not None:
        if type(value) is dict:
            return _object(field.shape, value, path + ".", out)
        out.append(Departure(path, "unconvertible", _kept(field.key, value)))
        return None
    assert field.convert is not None
    try:
        converted, changed = field.convert(value)
    except _Unlisted as unlisted:
        out.append(Departure(path, "unlisted_value", value))
        return unlisted.kept
    except _Malformed as malformed:
        out.append(Departure(path, "malformed", _kept(field.key, malformed.kept)))
        return malformed.kept
    except _Unconvertible:
        out.append(Departure(path, "unconvertible", _kept(field.key, value)))
        return None
    if changed:
        out.append(Departure(path, "converted", _kept(field.key, value)))
    return converted


def _list(field: _Field, value: Any, path: str, out: list[Departure]) -> list[Any] | None:
    if type(value) is not list:
        out.append(Departure(path, "unconvertible", _kept(field.key, value)))
        return None
    item_path = path + "[]"
    items = []
    for item in value:
        if item is None:
            out.append(Departure(item_path, "null"))
            continue
        read = _one(field, item, item_path, out)
        if read is not None:
            items.append(read)
    return items


def _kept(key: str, value: Any) -> Any:
    """The original value for the departures table: never a personal free text."""
    return None if key in PERSONAL_KEYS else value
