"""What a delivery's body must be to be stored, and to be loaded (issue 53).

The receiver takes UTF-8 JSON (a leading byte order mark is left out) nested at most `MAX_DEPTH` levels,
the envelope itself included: anything else is refused (400) before it is stored. A lone surrogate
(`\\ud83d`, half an emoji, legal JSON as JavaScript's `JSON.stringify` writes it) is no UTF-8 text: the
body is stored as sent (the escape is plain ASCII) and each text holding one, a value or a key, is
loaded with U+FFFD in place of the invalid code point (`valid_json`), so it costs that code point only.
A stored body that cannot be loaded at all (not JSON, nested too deep, an integer beyond 64 bits:
stored by an earlier receiver, or written by hand) is set aside by the loader (`loader.py`).
"""

from __future__ import annotations

import json
from typing import Any

from sources.platform.unreadable import MAX_DEPTH, valid_text

_BOM = "\ufeff"


class MalformedDelivery(ValueError):
    """A body that is not a delivery envelope; the receiver answers 400 with this message, the loader
    sets the stored delivery aside with it."""


def body_text(raw: bytes) -> str:
    """The body as text: UTF-8 only (RFC 8259), without a leading byte order mark."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedDelivery(f"the body is not UTF-8 text ({_guess(raw)})") from None
    return text.removeprefix(_BOM)


def parse_json(text: str) -> Any:
    """The JSON document of `text`, refused when it is no JSON or nested deeper than `MAX_DEPTH`."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise MalformedDelivery(f"the body is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        raise MalformedDelivery("the body is not JSON") from None
    if _depth_over(document, MAX_DEPTH):
        raise MalformedDelivery(f"the body is nested more than {MAX_DEPTH} levels deep")
    return document


def valid_json(value: Any) -> tuple[Any, int]:
    """The document with each lone surrogate (in a text or a key) replaced by U+FFFD, and how many texts
    were changed. Expects a document `parse_json` accepted (so at most `MAX_DEPTH` levels deep)."""
    if isinstance(value, str):
        text = valid_text(value)
        return text, int(text != value)
    if isinstance(value, list):
        items = [valid_json(item) for item in value]
        return [item for item, _ in items], sum(changed for _, changed in items)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        changed = 0
        for key, item in value.items():
            valid_key, key_changed = valid_json(key)
            out[valid_key], item_changed = valid_json(item)
            changed += key_changed + item_changed
        return out, changed
    return value, 0


def _depth_over(document: Any, limit: int) -> bool:
    """Whether objects and lists nest more than `limit` levels (the document's own included)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items if isinstance(item, dict | list))
    return False


def _guess(raw: bytes) -> str:
    """What the bytes look like, for the 400's message."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4]:
        return "UTF-16 or UTF-32, it seems"
    return "an invalid UTF-8 byte"
