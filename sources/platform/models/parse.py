"""``parse_record``: validate one API record and return the row to load.

Speed: validating into model instances and dumping them again costs about three times more than
validating into plain dicts, so each model is compiled once into a mirror of ``TypedDict``s with the same
fields, types, defaults and ``extra="allow"``; pydantic then validates a record into the row directly.
The result equals ``Model.model_validate(raw).model_dump()`` (the tests check it), except that a null
nested object is left out of the row (``_prune``).
"""

from __future__ import annotations

import functools
import logging
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Required, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.config import ExtraValues
from pydantic_core import PydanticUndefined
from typing_extensions import TypedDict

logger = logging.getLogger(__name__)

_VALUE_CHARS = 60


@dataclass(frozen=True)
class Problem:
    """One invalid field of a record."""

    path: str  # e.g. ``items[0].unitValue.value``
    value: Any  # the value received (``None`` when missing)
    message: str  # what was expected
    missing: bool = False

    def __str__(self) -> str:
        if self.missing:
            return f"{self.path}: missing; {self.message}"
        return f"{self.path}: got {_show(self.value)}; {self.message}"


class RecordValidationError(ValueError):
    """A record of the API does not match the models (the API spec, part 2)."""

    def __init__(self, resource: str, record_id: Any, problems: Sequence[Problem]) -> None:
        super().__init__(resource, record_id, list(problems))
        self.resource = resource
        self.record_id = record_id
        self.problems = list(problems)

    def __str__(self) -> str:
        ident = f" {self.record_id!r}" if self.record_id is not None else ""
        count = len(self.problems)
        lines = [
            f"{self.resource} record{ident} does not match the API spec "
            f"({count} problem{'s' if count != 1 else ''}):"
        ]
        lines += [f"  - {p}" for p in self.problems]
        lines.append(
            "What to do: the API sent data of another shape than documented. If it only added a new value "
            "to an enumeration, run with `strict_enums = false` in [sources.platform] to load such values "
            "with a warning; otherwise report this message with the record id so that the model in "
            "sources/platform/models can follow the API."
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class _Compiled:
    resource: str
    validate: Any  # SchemaValidator.validate_python
    enums: dict[tuple[str, ...], tuple[str, ...]]  # field path without list indices -> allowed values
    prune: _Prune | None  # where null nested objects are left out of the row


_COMPILED: dict[type[BaseModel], _Compiled] = {}
_RESOURCES: dict[type[BaseModel], str] = {}
_WARNED: set[tuple[str, str, str]] = set()

M = TypeVar("M", bound=type[BaseModel])


def register_resource(name: str, model: M) -> M:
    """Name the resource (table) that ``model`` is loaded into, for messages."""
    _RESOURCES[model] = name
    _COMPILED.pop(model, None)
    return model


def parse_record(
    model: type[BaseModel],
    raw: dict[str, Any],
    *,
    strict_enums: bool = True,
    resource: str | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Validate one API record against ``model`` and return the row to load.

    The row has the API's (camelCase) keys, ``datetime`` (aware, UTC) / ``Decimal`` / ``bool`` / ``int``
    values, nullable scalar fields present as ``None`` when absent, unknown fields kept at every level;
    a nested object that is null is left out (see ``_prune``).
    Raises ``RecordValidationError`` naming every bad field. With ``strict_enums=False`` a string that is
    not an allowed value of an enumeration is kept as it is: a warning is appended to ``warnings`` (if
    given) and logged once per resource, field and value; any other problem still raises.
    """
    compiled = _COMPILED.get(model) or _compile(model)
    try:
        row: dict[str, Any] = compiled.validate(raw)
    except ValidationError as exc:
        row = _recover(compiled, raw, exc, strict_enums, resource or compiled.resource, warnings)
    if compiled.prune is not None:
        _prune(row, compiled.prune)
    return row


def parse_page_strictly(model: type[BaseModel], content: bytes) -> dict[str, Any]:
    """The JSON document of a page body whose ``items`` are records of ``model``, with the items as the
    rows ``parse_record(model, item)`` returns; ``ValueError`` (pydantic's ``ValidationError``) unless
    the body is JSON, has a list ``items`` and every item validates with no field the models do not know,
    at any level, and no enumeration value they do not list. The envelope's other keys are not checked.

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


@functools.cache
def _strict_page_validator(model: type[BaseModel]) -> Any:
    record = _mirror(model, {}, "forbid")
    page = _typed_dict(f"{model.__name__}Page", {"items": Required[list[record]]})  # type: ignore[valid-type]
    page.__pydantic_config__ = ConfigDict(extra="allow", title=f"{model.__name__} page")
    return TypeAdapter(page).validator.validate_json


def _recover(
    compiled: _Compiled,
    raw: dict[str, Any],
    exc: ValidationError,
    strict_enums: bool,
    resource: str,
    warnings: list[str] | None,
) -> dict[str, Any]:
    record_id = raw.get("id") if isinstance(raw, dict) else None
    errors = exc.errors(include_url=False)
    unknown: list[tuple[tuple[Any, ...], tuple[str, ...]]] = []
    problems: list[Problem] = []
    for error in errors:
        loc = tuple(error["loc"])
        allowed = compiled.enums.get(tuple(p for p in loc if isinstance(p, str)))
        if error["type"] == "literal_error" and allowed is not None and isinstance(error["input"], str):
            if not strict_enums:
                unknown.append((loc, allowed))
                continue
            problems.append(Problem(_path(loc), error["input"], f"expected one of {_choices(allowed)}"))
        elif error["type"] == "missing":
            problems.append(Problem(_path(loc), None, "a value is required", missing=True))
        else:
            problems.append(Problem(_path(loc), error["input"], _expectation(error)))
    if problems or not isinstance(raw, dict):
        if not problems:
            problems.append(Problem("(record)", raw, "expected a JSON object"))
        raise RecordValidationError(resource, record_id, problems) from None
    # Only unknown enum values: validate with an allowed placeholder, then put the API's values back.
    patched = raw
    originals = []
    for loc, allowed in unknown:
        patched, original = _replace(patched, loc, allowed[0])
        originals.append((loc, original, allowed))
    try:
        row: dict[str, Any] = compiled.validate(patched)
    except ValidationError as again:  # pragma: no cover - placeholders are valid by construction
        raise RecordValidationError(resource, record_id, [Problem("(record)", None, str(again))]) from None
    for loc, original, allowed in originals:
        _replace(row, loc, original, in_place=True)
        message = (
            f"{resource} record {record_id!r}: {_path(loc)} = {_show(original)} is not an allowed value "
            f"({_choices(allowed)}); kept as it is because strict_enums is off"
        )
        if warnings is not None:
            warnings.append(message)
        key = (resource, _path(tuple(p for p in loc if isinstance(p, str))), str(original))
        if key not in _WARNED:
            _WARNED.add(key)
            logger.warning("%s (further records with this value are not logged)", message)
    return row


def _replace(container: Any, loc: tuple[Any, ...], value: Any, in_place: bool = False) -> tuple[Any, Any]:
    """Set ``value`` at ``loc``; unless ``in_place``, copy the containers on the way (the input is the
    caller's). Returns the (new) root and the previous value."""
    root = container if in_place else _shallow(container)
    node = root
    for part in loc[:-1]:
        child = node[part]
        if not in_place:
            child = _shallow(child)
            node[part] = child
        node = child
    previous = node[loc[-1]]
    node[loc[-1]] = value
    return root, previous


def _shallow(value: Any) -> Any:
    return list(value) if isinstance(value, list) else dict(value)


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(record)"


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > _VALUE_CHARS:
        text = text[: _VALUE_CHARS - 3] + "..."
    return f"{text} ({type(value).__name__})"


def _choices(allowed: tuple[str, ...]) -> str:
    return ", ".join(repr(a) for a in allowed)


def _expectation(error: Any) -> str:
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    elif message.startswith("Input should be "):
        message = "expected " + message[len("Input should be ") :]
    return message


# --- compiling a model into a TypedDict mirror ---


def _compile(model: type[BaseModel]) -> _Compiled:
    mirror = _mirror(model, {})
    validator = TypeAdapter(mirror).validator
    compiled = _Compiled(
        resource=_RESOURCES.get(model, model.__name__),
        validate=validator.validate_python,
        enums=dict(_enum_paths(model, ())),
        prune=_prune_plan(model),
    )
    _COMPILED[model] = compiled
    return compiled


_typed_dict: Any = TypedDict  # called with a computed name and fields


def _mirror(model: type[BaseModel], done: dict[type, Any], extra: ExtraValues = "allow") -> Any:
    if model in done:
        return done[model]
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation = _mirror_type(info.annotation, done, extra)
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]
        if info.is_required():
            fields[name] = Required[annotation]
        else:
            default = None if info.default is PydanticUndefined else info.default
            fields[name] = NotRequired[Annotated[annotation, Field(default=default)]]
    mirror = _typed_dict(model.__name__, fields)
    mirror.__pydantic_config__ = ConfigDict(extra=extra, title=model.__name__)
    done[model] = mirror
    return mirror


def _mirror_type(tp: Any, done: dict[type, Any], extra: ExtraValues) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _mirror(tp, done, extra)
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


def _enum_paths(
    model: type[BaseModel], prefix: tuple[str, ...]
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    found = []
    for name, info in model.model_fields.items():
        for leaf in _leaves(info.annotation):
            if isinstance(leaf, type) and issubclass(leaf, BaseModel):
                found += _enum_paths(leaf, (*prefix, name))
            elif get_origin(leaf) is Literal:
                found.append(((*prefix, name), tuple(get_args(leaf))))
    return found


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
