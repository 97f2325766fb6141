"""Records that cannot be loaded whatever their columns: what in one record would stop the whole extract
(dlt writes rows with orjson, which refuses them), found before the record becomes a row, so that the
record is quarantined and the rest of its page, resource and run load.

- a text (a value or a key) holding a lone surrogate: legal JSON (`\\ud83d`, half an emoji as JavaScript's
  `JSON.stringify` writes it), but no UTF-8 text;
- nesting deeper than `MAX_DEPTH` levels (orjson stops at 255, with the row and dlt's own nesting on top);
- an integer outside 64 bits (signed: DuckDB's BIGINT), or a whole float beyond them (`1e30`: dlt turns it
  into an integer in a column that an integer typed first, and then cannot write it);
- a value of a type JSON has not (none comes from a JSON parser; a safeguard for records built in code).

A record that `orjson.dumps` writes within `MAX_DEPTH` levels, with no integer beyond 53 bits and no
exponent of 18 or more in its text is readable: the common case costs one C call and one regular
expression; the others are walked in Python (`_find`). The raw text
kept for a quarantined record (`safe_json`) is valid UTF-8, cut at `MAX_RAW` characters, and says what
was changed.

A bad value costs that value, not its record (issue 48): `mend` returns the record with each such value
replaced, so that it loads, and says what it replaced where (`Mended`): a lone surrogate by U+FFFD (in a
text or a key), an object or list nested past `MENDED_DEPTH` levels by its JSON text, an integer beyond
64 bits by null (its digits kept in the departure), a whole float beyond them by its text (`1e+30`, which
dlt reads back into a float column), a value of a type JSON has not by its `repr`.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, NamedTuple

import orjson

MAX_DEPTH = 128  # objects and lists, the record's own included
_ORJSON_DEPTH = 254  # the most objects and lists orjson writes nested (measured: 255 is refused)
_WRAPPERS = _ORJSON_DEPTH - MAX_DEPTH
_LOCAL = threading.local()
MAX_RAW = 1_000_000  # characters of raw JSON kept for one quarantined record
_INT64 = (-(2**63), 2**63 - 1)
_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT = "\ufffd"
_PATH_SHOWN = 80
# A float written with an exponent of 18 or more (orjson writes `1e30`, `-9.3e18`): maybe beyond 64 bits.
_BIG_EXPONENT = re.compile(rb"[0-9]e\+?(?:1[89]|[2-9][0-9]|[0-9]{3})")
_BIG_FLOAT = float(2**63)
# Where `mend` turns a nested value into its JSON text: well inside `MAX_DEPTH`, since dlt's rows nest
# child tables and their own keys on top of the record's levels.
MENDED_DEPTH = 64


def unreadable(record: Any) -> str | None:
    """Why this record cannot be loaded, or None if it can."""
    chain, slot = _wrappers()
    slot.append(record)
    try:
        # Strict integers: orjson refuses any beyond 53 bits, the few records holding one are walked.
        text = orjson.dumps(chain, option=orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):
        return _find(record)
    finally:
        slot.clear()
    return _find(record) if _BIG_EXPONENT.search(text) else None


def _wrappers() -> tuple[list[Any], list[Any]]:
    """This thread's lists nested `_WRAPPERS` deep, and the innermost one, where a record is put so that
    orjson refuses it when it nests deeper than MAX_DEPTH (built once per thread, not per record)."""
    made = getattr(_LOCAL, "wrappers", None)
    if made is None:
        slot: list[Any] = []
        chain = slot
        for _ in range(_WRAPPERS - 1):
            chain = [chain]
        made = _LOCAL.wrappers = (chain, slot)
    return made


def safe_json(record: Any) -> tuple[str, str]:
    """The record as JSON text that can be stored, and a note of what was changed to make it so (empty if
    nothing was): lone surrogates replaced by U+FFFD, the text cut at `MAX_RAW` characters."""
    notes = []
    try:
        text = json.dumps(record, default=repr, ensure_ascii=False)
    except (RecursionError, ValueError):
        text, notes = repr(record), ["not JSON: Python's representation"]
    text, replaced = _SURROGATE.subn(_REPLACEMENT, text)
    if replaced:
        notes.append(f"{replaced} invalid code point{'s' if replaced > 1 else ''} replaced by U+FFFD")
    if len(text) > MAX_RAW:
        notes.append(f"cut at {MAX_RAW:,} of {len(text):,} characters")
        text = text[:MAX_RAW]
    return text, "; ".join(notes)


def valid_text(text: str) -> str:
    """The text with its lone surrogates replaced by U+FFFD (a key kept as a record id, for one)."""
    return text if text.isascii() else _SURROGATE.sub(_REPLACEMENT, text)


def _find(record: Any) -> str | None:
    """The first problem in the record, depth first, with its path (`a.b[2]`)."""
    stack: list[tuple[Any, str, int]] = [(record, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth >= MAX_DEPTH and isinstance(value, dict | list):
            return f"nested more than {MAX_DEPTH} levels deep (at {_shown(path)})"
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                if not isinstance(key, str):
                    return f"a key of type {type(key).__name__} at {_shown(path)}"
                if _SURROGATE.search(key):
                    return f"a key holds an invalid code point (a lone surrogate) at {_shown(path)}"
                stack.append((item, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(value, list):
            for index in reversed(range(len(value))):
                stack.append((value[index], f"{path}[{index}]", depth + 1))
        elif isinstance(value, str):
            if match := _SURROGATE.search(value):
                point = f"U+{ord(match.group()):04X}"
                return f"a text holds an invalid code point (a lone surrogate {point}) at {_shown(path)}"
        elif isinstance(value, float):
            if _huge_whole(value):
                return f"the whole number {value!r} at {_shown(path)} does not fit in 64 bits"
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if not _INT64[0] <= value <= _INT64[1]:
                digits = len(str(abs(value)))
                return f"the integer at {_shown(path)} does not fit in 64 bits ({digits} digits)"
        else:
            return f"a value of type {type(value).__name__} at {_shown(path)}, which JSON has not"
    return None


def _shown(path: str) -> str:
    """The path, its middle left out when long (a record nested 200 levels has a path as long)."""
    if len(path) > _PATH_SHOWN:
        half = _PATH_SHOWN // 2
        return f"{path[:half]}...{path[-half:]}"
    return path or "the record itself"


class Mended(NamedTuple):
    """One value `mend` replaced: where (`a.b[]`, list elements as `[]`), why, and the original where it
    can be kept (an integer's digits; a surrogate cannot be stored, a deep object is in the row as text)."""

    path: str
    reason: str
    original: str | None = None


def mend(record: Any) -> tuple[Any, list[Mended]]:
    """The record with every value that cannot be loaded replaced (see the module), and what was."""
    found: list[Mended] = []
    return _mended(record, "", 0, found), found


def _mended(value: Any, path: str, depth: int, found: list[Mended]) -> Any:
    if isinstance(value, dict | list) and depth >= MENDED_DEPTH:
        found.append(Mended(path, f"nested more than {MENDED_DEPTH} levels: loaded as its JSON text"))
        return safe_json(value)[0]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = key if isinstance(key, str) else str(key)
            if _SURROGATE.search(name):
                name = valid_text(name)
                found.append(Mended(_joined(path, name), "a key's invalid code point replaced by U+FFFD"))
            out[name] = _mended(item, _joined(path, name), depth + 1, found)
        return out
    if isinstance(value, list):
        return [_mended(item, f"{path}[]", depth + 1, found) for item in value]
    if isinstance(value, str):
        if _SURROGATE.search(value):
            found.append(Mended(path, "an invalid code point (a lone surrogate) replaced by U+FFFD"))
            return valid_text(value)
        return value
    if isinstance(value, float) and _huge_whole(value):
        found.append(Mended(path, "a whole number beyond 64 bits: loaded as its text", repr(value)))
        return repr(value)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return value
        found.append(Mended(path, "an integer beyond 64 bits: loaded as null", str(value)))
        return None
    found.append(Mended(path, f"a value of type {type(value).__name__}: loaded as its text"))
    return repr(value)


def _huge_whole(value: float) -> bool:
    return value.is_integer() and abs(value) >= _BIG_FLOAT


def _joined(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
