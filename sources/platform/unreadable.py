"""Records that cannot be loaded whatever their columns: what in one record would stop the whole extract
(dlt writes rows with orjson, which refuses them), found before the record becomes a row, so that the
record is quarantined and the rest of its page, resource and run load.

- a text (a value or a key) holding a lone surrogate: legal JSON (`\\ud83d`, half an emoji as JavaScript's
  `JSON.stringify` writes it), but no UTF-8 text;
- nesting deeper than `MAX_DEPTH` levels (orjson stops at 255, with the row and dlt's own nesting on top);
- an integer outside 64 bits (signed: DuckDB's BIGINT);
- a value of a type JSON has not (none comes from a JSON parser; a safeguard for records built in code).

A record that `orjson.dumps` writes within `MAX_DEPTH` levels and with no integer beyond 53 bits is
readable: the common case costs one C call; the others are walked in Python (`_find`). The raw text
kept for a quarantined record (`safe_json`) is valid UTF-8, cut at `MAX_RAW` characters, and says what
was changed.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

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


def unreadable(record: Any) -> str | None:
    """Why this record cannot be loaded, or None if it can."""
    chain, slot = _wrappers()
    slot.append(record)
    try:
        # Strict integers: orjson refuses any beyond 53 bits, the few records holding one are walked.
        orjson.dumps(chain, option=orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):
        return _find(record)
    finally:
        slot.clear()
    return None


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
        elif isinstance(value, bool) or value is None or isinstance(value, float):
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
