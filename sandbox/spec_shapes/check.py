"""Checking a value against a shape: `problems(value, schema)`, and the words shapes are written in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Opt:
    schema: Any


class Enum(tuple[str, ...]):
    def __new__(cls, *values: str) -> Enum:
        return super().__new__(cls, values)


S, N, B, DT, URL, UUID, OBJ = "string", "number", "boolean", "datetime", "url", "uuid", "object"
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}"  # date-only is allowed (transfers), and the zoneless "YYYY-MM-DD HH:MM:SS"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def problems(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Every way `value` differs from `schema` (empty when it conforms)."""
    if isinstance(schema, Opt):
        return [] if value is None else problems(value, schema.schema, path)
    if value is None:
        return [f"{path}: null but not nullable"]
    if isinstance(schema, Enum):
        return [] if value in schema else [f"{path}: {value!r} not in {list(schema)}"]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not an object"]
        found: list[str] = []
        for key, sub in schema.items():
            if key not in value:
                found.append(f"{path}.{key}: missing")
            else:
                found += problems(value[key], sub, f"{path}.{key}")
        return found
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__}, not an array"]
        return [p for i, item in enumerate(value) for p in problems(item, schema[0], f"{path}[{i}]")]
    return [] if _is(value, schema) else [f"{path}: {value!r} is not a {schema}"]


def _is(value: Any, kind: str) -> bool:
    if kind == N:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == B:
        return isinstance(value, bool)
    if kind == OBJ:
        return isinstance(value, dict)
    if not isinstance(value, str):
        return False
    if kind == DT:
        return bool(_DATETIME.fullmatch(value))
    if kind == URL:
        return value.startswith(("http://", "https://"))
    if kind == UUID:
        return bool(_UUID.fullmatch(value))
    return kind == S
