"""The privacy settings (`[sources.platform.privacy]`, the key in secrets) and the keyed hash.

A pseudonym is `HMAC-SHA256(key, group + NUL + normalised value)`, the first 128 bits in hex: the same
person has the same pseudonym in every table, join and run for as long as the key stays; without the key
nobody can compute one from a CPF (11 digits: an unkeyed hash would be reversed by trying them all). The
group is part of the message, so an email's pseudonym never equals a document's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sources.platform.privacy.fields import ADDRESSES, DOCUMENTS, EMAILS, GROUPS, NAMES, PHONES
from sources.platform_client.errors import ConfigurationError

KEEP, HASH, BLOCK = "keep", "hash", "block"
MODES = (KEEP, HASH, BLOCK)
MIN_KEY_LENGTH = 16
PSEUDONYM_HEX = 32
CONFIG_HINT = "[sources.platform.privacy] in .dlt/config.toml"
KEY_HINT = "privacy_key under [sources.platform] in .dlt/secrets.toml (or SOURCES__PLATFORM__PRIVACY_KEY)"

_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")
_NOT_DIGIT = re.compile(r"[^0-9]")
# HMAC (RFC 2104) over SHA-256: the key padded to the hash's block, XORed with these bytes
_BLOCK = 64
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _email(value: str) -> str:
    return value.strip().lower()


def _document(value: str) -> str:
    return _NOT_ALNUM.sub("", value).upper()


def _phone(value: str) -> str:
    return _NOT_DIGIT.sub("", value)


def _words(value: str) -> str:
    return " ".join(value.split()).casefold()


_NORMALISERS: dict[str, Callable[[str], str]] = {EMAILS: _email, DOCUMENTS: _document, PHONES: _phone}


def normalise(group: str, value: str) -> str:
    """The form two spellings of one value share: a CPF without punctuation, an email lowercased and
    trimmed, a phone's digits, a name or an address with single spaces, case folded."""
    return normaliser(group)(value)


def normaliser(group: str) -> Callable[[str], str]:
    """The group's `normalise`, to apply to many values."""
    return _NORMALISERS.get(group, _words)


@dataclass(frozen=True)
class PrivacySettings:
    """What happens to each group (`keep`, `hash`, `block`) and the key, if one is set."""

    modes: Mapping[str, str]
    key: bytes | None = None

    @property
    def active(self) -> bool:
        """Whether any value is changed on the way in."""
        return any(mode != KEEP for mode in self.modes.values())

    def mode(self, group: str) -> str:
        return self.modes.get(group, KEEP)

    def pseudonym(self, group: str, value: str) -> str:
        """The keyed hash of the normalised value (requires the key)."""
        return self.pseudonyms(group, (value,))[0]

    def pseudonyms(self, group: str, values: Iterable[str]) -> list[str]:
        """`pseudonym` of each value, in order: HMAC-SHA256 from the two keyed states of `_pads`, copied
        per value (0.65 µs a value, against 1.9 for `hmac.digest`, which sets OpenSSL's key up each time;
        a million rows name millions of people's values)."""
        inner_state, outer_state = self._pads
        new_inner, new_outer = inner_state.copy, outer_state.copy
        prefix = f"{group}\x00"
        clean = normaliser(group)
        hashed: list[str] = []
        append = hashed.append
        for value in values:
            inner = new_inner()
            inner.update((prefix + clean(value)).encode())
            outer = new_outer()
            outer.update(inner.digest())
            append(outer.hexdigest()[:PSEUDONYM_HEX])
        return hashed

    def pad_keys(self) -> tuple[bytes, bytes]:
        """HMAC's two padded keys: the key XOR ipad, and the key XOR opad (requires the key)."""
        if self.key is None:
            raise ConfigurationError(f"privacy: a pseudonym needs {KEY_HINT}")
        key = hashlib.sha256(self.key).digest() if len(self.key) > _BLOCK else self.key
        key = key.ljust(_BLOCK, b"\0")
        return key.translate(_IPAD), key.translate(_OPAD)

    @cached_property
    def _pads(self) -> tuple[Any, Any]:
        """SHA-256 after each padded key (`pad_keys`): HMAC's two keyed states."""
        inner, outer = self.pad_keys()
        return hashlib.sha256(inner), hashlib.sha256(outer)

    def key_id(self) -> str | None:
        """Names the key without revealing it (recorded with the data: a changed key is noticed)."""
        if self.key is None:
            return None
        return hmac.digest(self.key, b"platform-sync key id", "sha256").hex()[:12]

    def record(self) -> dict[str, Any]:
        """What is recorded with the data: each group's mode and, where something is hashed, the key id."""
        hashed = any(mode == HASH for mode in self.modes.values())
        return {
            "modes": {group: self.mode(group) for group in GROUPS},
            "key_id": self.key_id() if hashed else None,
        }


OFF = PrivacySettings({group: KEEP for group in GROUPS})


def parse_privacy(privacy: Mapping[str, Any] | None, key: Any) -> PrivacySettings:
    """The settings from config (`group = "keep" | "hash" | "block"`) and the key from secrets; one clear
    line (`ConfigurationError`, exit status 2) for an unknown group or mode, or `hash` without a key."""
    if privacy is None:
        privacy = {}
    if not isinstance(privacy, Mapping):
        raise ConfigurationError(f'{CONFIG_HINT} must be a table such as emails = "hash"')
    modes: dict[str, str] = {}
    for group, mode in privacy.items():
        if group not in GROUPS:
            raise ConfigurationError(
                f"unknown privacy group {group!r} in {CONFIG_HINT}; the groups are: {', '.join(GROUPS)}"
            )
        if mode not in MODES:
            raise ConfigurationError(
                f"privacy {group} = {mode!r} in {CONFIG_HINT}: the choices are {', '.join(MODES)}"
            )
        modes[group] = str(mode)
    text = None if key is None else str(key)
    if text is not None and len(text) < MIN_KEY_LENGTH:
        raise ConfigurationError(
            f"the privacy key is shorter than {MIN_KEY_LENGTH} characters: set a longer {KEY_HINT}, "
            "e.g. the output of `python -c 'import secrets; print(secrets.token_hex(32))'`"
        )
    if text is None and HASH in modes.values():
        hashed = ", ".join(group for group, mode in modes.items() if mode == HASH)
        raise ConfigurationError(f"privacy: {hashed} = hash needs {KEY_HINT}")
    return PrivacySettings(
        {group: modes.get(group, KEEP) for group in GROUPS}, text.encode() if text else None
    )


def configured_privacy() -> PrivacySettings:
    """The settings as the sync would resolve them, for the commands outside the source (`forget`, the
    webhook loader, the attendee import)."""
    import dlt

    privacy: Any = dlt.config.get("sources.platform.privacy", expected_type=dict)
    key: Any = dlt.secrets.get("sources.platform.privacy_key")
    return parse_privacy(privacy, key)


__all__ = [
    "ADDRESSES",
    "BLOCK",
    "DOCUMENTS",
    "EMAILS",
    "HASH",
    "KEEP",
    "NAMES",
    "OFF",
    "PHONES",
    "PrivacySettings",
    "configured_privacy",
    "normalise",
    "parse_privacy",
]
