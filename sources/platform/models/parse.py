"""``parse_record``: read one API record into the row to load, and what in it departs from the spec.

Speed: validating into model instances and dumping them again costs about three times more than
validating into plain dicts, so each model is compiled once into a mirror of ``TypedDict``s with the same
fields and defaults, the spec's wire forms (``CANONICAL_FORMS``: numbers as JSON numbers, timestamps with
a zone; strict integers and booleans) and no unknown field; pydantic then validates a record into the row
directly. A record it refuses departs from the spec somewhere: ``tolerant.py`` reads it field by field
and names each departure. The row equals ``Model.model_validate(raw).model_dump()`` for a record that
departs in nothing (the tests check it), except that a null nested object is left out of the row
(``_prune``).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Required, TypeVar, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, TypeAdapter, ValidationError
from pydantic.config import ExtraValues
from pydantic_core import PydanticUndefined
from typing_extensions import TypedDict

from .common import CANONICAL_FORMS
from .tolerant import Departure, full_annotation, read_tolerantly

_VALUE_CHARS = 60


@dataclass(frozen=True)
class Problem:
    """One field of a record that is not as the spec documents it."""

    path: str  # e.g. ``items[].unitValue.value``
    value: Any  # the value received (``None`` when missing or null)
    message: str  # what happened

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}: got {_show(self.value)}; {self.message}"


_MESSAGES = {
    "null": "null, and the spec does not mark it nullable",
    "missing": "missing, and the spec does not mark it nullable",
    "unlisted_value": "a value the spec does not list",
    "unlisted_field": "a field the spec does not list",
    "converted": "of another JSON type than documented (converted without loss)",
    "unconvertible": "of another type than documented, and not convertible",
    "malformed": "not of the documented format",
}


class RecordValidationError(ValueError):
    """A record of the API departs from the spec and the source reads strictly (``strict = true``), or
    is not a JSON object at all."""

    def __init__(self, resource: str, record_id: Any, problems: Sequence[Problem]) -> None:
        super().__init__(resource, record_id, list(problems))
        self.resource = resource
        self.record_id = record_id
        self.problems = list(problems)

    def __str__(self) -> str:
        ident = f" {self.record_id!r}" if self.record_id is not None else ""
        count = len(self.problems)
        lines = [
            f"{self.resource} record{ident} departs from the API spec "
            f"({count} problem{'s' if count != 1 else ''}):"
        ]
        lines += [f"  - {p}" for p in self.problems]
        lines.append(
            "What to do: the API sent data of another shape than documented. With `strict = false` in "
            "[sources.platform] (the default) such records load and each departure is recorded in the "
            "table _platform_departures; report the departure so that sources/platform/models can follow "
            "the API."
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class _Compiled:
    resource: str
    validate: Any  # SchemaValidator.validate_python
    prune: _Prune | None  # where null nested objects are left out of the row


_COMPILED: dict[type[BaseModel], _Compiled] = {}
_RESOURCES: dict[type[BaseModel], str] = {}

M = TypeVar("M", bound=type[BaseModel])


def register_resource(name: str, model: M) -> M:
    """Name the resource (table) that ``model`` is loaded into, for messages."""
    _RESOURCES[model] = name
    _COMPILED.pop(model, None)
    return model


def parse_record(
    model: type[BaseModel],
    raw: Any,
    *,
    strict: bool = False,
    resource: str | None = None,
    departures: list[Departure] | None = None,
) -> dict[str, Any]:
    """Read one API record (a JSON object) into the row to load.

    The row has the API's (camelCase) keys, ``datetime`` (aware, UTC) / ``Decimal`` / ``bool`` / ``int``
    values, nullable scalar fields present as ``None`` when absent, unknown fields kept at every level;
    a nested object that is null is left out (see ``_prune``). A record that departs from the spec
    loads as faithfully as its columns allow (``tolerant.py``), and its departures are appended to
    ``departures``; with ``strict`` they raise ``RecordValidationError`` instead, naming each. A value
    that is not a JSON object always raises it.
    """
    compiled = _COMPILED.get(model) or _compile(model)
    try:
        row: dict[str, Any] = compiled.validate(raw)
    except ValidationError:
        name = resource or compiled.resource
        if not isinstance(raw, dict):
            problem = Problem("(record)", raw, "expected a JSON object")
            raise RecordValidationError(name, None, [problem]) from None
        row, found = read_tolerantly(model, raw)
        if found and strict:
            problems = [Problem(d.path, d.value, _MESSAGES[d.kind]) for d in found]
            raise RecordValidationError(name, raw.get("id"), problems) from None
        if departures is not None:
            departures.extend(found)
        return row
    if compiled.prune is not None:
        _prune(row, compiled.prune)
    return row


def parse_page_strictly(model: type[BaseModel], content: bytes) -> dict[str, Any]:
    """The JSON document of a page body whose ``items`` are records of ``model``, with the items as the
    rows ``parse_record(model, item)`` returns; ``ValueError`` (pydantic's ``ValidationError``) unless
    the body is JSON, has a list ``items`` and every item departs from the spec in nothing (no field the
    models do not know at any level, no enumeration value they do not list, every value in its wire form).
    The envelope's other keys are not checked.

    For the helper processes (``offload.py``), which leave every such page to the ordinary path; one
    call of pydantic's JSON validator on the whole body takes about two thirds of the time of parsing
    it and validating its records one by one.
    """
    compiled = _COMPILED.get(model) or _compile(model)
    document: dict[str, Any] = _strict_page_validator(model)(content)
    if compiled.prune is not None:
        for row in document["items"]:
            _prune(row, compiled.prune)
    return document


@dataclass(frozen=True, slots=True)
class DepartingRecord:
    """An item of a page that ``parse_page_leniently`` could not read strictly: the JSON value as sent."""

    raw: Any


def parse_page_leniently(model: type[BaseModel], content: bytes) -> dict[str, Any]:
    """The JSON document of a page body, each of its ``items`` the row ``parse_page_strictly`` gives or,
    for a record that departs from the spec (or is no object), a ``DepartingRecord`` to read with
    ``parse_record``. ``ValueError`` if the body is not JSON with a list ``items``.

    One pass over a page where some records depart: parsing it, then validating each record apart,
    costs more (bench/README.md).
    """
    compiled = _COMPILED.get(model) or _compile(model)
    document: dict[str, Any] = _lenient_page_validator(model)(content)
    if compiled.prune is not None:
        for row in document["items"]:
            if type(row) is dict:
                _prune(row, compiled.prune)
    return document


@functools.cache
def _lenient_page_validator(model: type[BaseModel]) -> Any:
    record = _mirror(model, {}, "forbid")
    # Left to right: the strict mirror first, then anything at all, kept as it came.
    choices = typing.Union[(record, Annotated[Any, AfterValidator(DepartingRecord)])]  # type: ignore[valid-type]  # noqa: UP007
    either = Annotated[choices, Field(union_mode="left_to_right")]
    page = _typed_dict(f"{model.__name__}LenientPage", {"items": Required[list[either]]})
    page.__pydantic_config__ = ConfigDict(extra="allow", title=f"{model.__name__} page")
    return TypeAdapter(page).validator.validate_json


@functools.cache
def _strict_page_validator(model: type[BaseModel]) -> Any:
    record = _mirror(model, {}, "forbid")
    # `fail_fast`: the first record that departs settles it (the page is read again record by record);
    # validating the rest of a drifting page only to list its other errors cost more than half of it.
    items = Annotated[list[record], Field(fail_fast=True)]  # type: ignore[valid-type]
    page = _typed_dict(f"{model.__name__}Page", {"items": Required[items]})
    page.__pydantic_config__ = ConfigDict(extra="allow", title=f"{model.__name__} page")
    return TypeAdapter(page).validator.validate_json


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > _VALUE_CHARS:
        text = text[: _VALUE_CHARS - 3] + "..."
    return f"{text} ({type(value).__name__})"


# --- compiling a model into a TypedDict mirror ---


def _compile(model: type[BaseModel]) -> _Compiled:
    mirror = _mirror(model, {}, "forbid")
    validator = TypeAdapter(mirror).validator
    compiled = _Compiled(
        resource=_RESOURCES.get(model, model.__name__),
        validate=validator.validate_python,
        prune=_prune_plan(model),
    )
    _COMPILED[model] = compiled
    return compiled


_typed_dict: Any = TypedDict  # called with a computed name and fields


def _mirror(model: type[BaseModel], done: dict[type, Any], extra: ExtraValues) -> Any:
    if model in done:
        return done[model]
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation = _mirror_type(full_annotation(info), done, extra)
        if info.is_required():
            fields[name] = Required[annotation]
        else:
            default = None if info.default is PydanticUndefined else info.default
            fields[name] = NotRequired[Annotated[annotation, Field(default=default)]]
    mirror = _typed_dict(model.__name__, fields)
    mirror.__pydantic_config__ = ConfigDict(extra=extra, title=model.__name__)
    done[model] = mirror
    return mirror


_STRICT_SCALARS = {int: Annotated[int, Strict()], bool: Annotated[bool, Strict()]}


def _mirror_type(tp: Any, done: dict[type, Any], extra: ExtraValues) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _mirror(tp, done, extra)
    if tp in _STRICT_SCALARS or tp in CANONICAL_FORMS:
        return _STRICT_SCALARS.get(tp) or CANONICAL_FORMS[tp]
    origin = get_origin(tp)
    if origin is None or origin is Literal:
        return tp
    args = get_args(tp)
    if origin is Annotated:
        return Annotated[(_mirror_type(args[0], done, extra), *tp.__metadata__)]
    if origin is types.UnionType or origin is typing.Union:
        mirrored = tuple(_mirror_type(a, done, extra) for a in args)
        return typing.Union[mirrored]  # noqa: UP007 - built from a tuple
    if origin is list:
        return list[_mirror_type(args[0], done, extra)]  # type: ignore[misc]
    return tp


def _leaves(tp: Any) -> list[Any]:
    """The non-None types inside unions, lists and annotations."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _leaves(get_args(tp)[0])
    if origin is types.UnionType or origin is typing.Union or origin is list:
        return [leaf for arg in get_args(tp) if arg is not type(None) for leaf in _leaves(arg)]
    return [tp]


# --- null nested objects ---
# A nested object that is null (a sale's ``refund``) would reach dlt as a column without any type, which
# dlt reports with a warning on every load; its flattened columns are declared by the hints, so the null
# object itself is left out of the row (``row.get("refund")`` is still ``None``).

_Prune = tuple[tuple[str, ...], tuple[tuple[str, Any, bool], ...]]  # (keys dropped if None, children)


def _prune_plan(model: type[BaseModel]) -> _Prune | None:
    drop: list[str] = []
    children: list[tuple[str, Any, bool]] = []
    for name, info in model.model_fields.items():
        tp = info.annotation
        is_list = get_origin(tp) is list
        objects = [leaf for leaf in _leaves(tp) if isinstance(leaf, type) and issubclass(leaf, BaseModel)]
        if not objects:
            continue
        if not is_list and (type(None) in get_args(tp) or not info.is_required()):
            drop.append(name)
        sub = _prune_plan(objects[0])
        if sub is not None:
            children.append((name, sub, is_list))
    return (tuple(drop), tuple(children)) if drop or children else None


def _prune(row: dict[str, Any], plan: _Prune) -> None:
    drop, children = plan
    for key in drop:
        if key in row and row[key] is None:
            del row[key]
    for key, sub, is_list in children:
        value = row.get(key)
        if is_list:
            if type(value) is list:
                for item in value:
                    if type(item) is dict:
                        _prune(item, sub)
        elif type(value) is dict:
            _prune(value, sub)
