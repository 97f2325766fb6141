"""Remove secrets from URLs and text before they are logged, raised or recorded.

Two complementary nets: `redact_url` masks the values of query parameters whose *names* are sensitive
(a URL built by someone else may carry `access_token=`), and `Redactor` removes the *values* of the
secrets this process knows (the token, the client secret, an authorization code) wherever they appear,
e.g. echoed back in a server's error message.
"""

from __future__ import annotations

import ipaddress
import re
import threading
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit

MASK = "***"

# Lower-case query or body keys whose values are secrets.
SENSITIVE_KEYS: frozenset[str] = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "client_secret",
        "code",
        "password",
        "secret",
        "api_key",
        "apikey",
        "authorization",
    }
)

# Secret values shorter than this are not searched for: masking every "a" would destroy the text, and a
# real token or secret is never this short.
_MIN_SECRET_LENGTH = 6

_BEARER = re.compile(r"(?i)\b(bearer)\s+[^\s\"',;]+")
_KEY_VALUE = re.compile(
    r"(?i)(?<![\w-])([\"']?(?:" + "|".join(sorted(SENSITIVE_KEYS)) + r")[\"']?\s*[:=]\s*)([\"']?)"
    # `Authorization: Bearer <x>` is left to _BEARER, so that it reads `Bearer ***`.
    r"(?!bearer\s|basic\s)([^\"'&\s,;}]+)"
)


def redact_url(url: object) -> str:
    """The URL with user info dropped and the values of sensitive query parameters masked."""
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return redact_patterns(text)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    # Only sensitive pairs are rewritten; the others keep their encoding, so a logged URL reads as sent.
    query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_pair(pair: str) -> str:
    key, sep, _ = pair.partition("=")
    if unquote_plus(key).lower() in SENSITIVE_KEYS:
        return f"{key}={MASK}"
    return pair if sep else key


def redact_patterns(text: str) -> str:
    """Mask `Bearer <x>` and `<sensitive key>=<x>` / `"<sensitive key>": "<x>"` in free text."""
    text = _BEARER.sub(lambda match: f"{match.group(1)} {MASK}", text)
    return _KEY_VALUE.sub(lambda match: f"{match.group(1)}{match.group(2)}{MASK}", text)


class Redactor:
    """Removes known secret values (and their URL-encoded forms) and secret-looking patterns from text.

    Thread-safe: secrets may be added while other threads redact.
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._needles: tuple[str, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        """Remember `secret` so that it is masked from now on."""
        if not secret or len(secret) < _MIN_SECRET_LENGTH:
            return
        forms = {secret, quote(secret, safe=""), quote_plus(secret)}
        with self._lock:
            # Longest first, so that a secret containing another is replaced whole.
            self._needles = tuple(sorted(set(self._needles) | forms, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        return self.redact(text)

    def redact(self, text: str) -> str:
        """`text` without any known secret value or secret-looking pattern."""
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, MASK)
        return redact_patterns(text)

    def __repr__(self) -> str:
        return f"Redactor({len(self._needles)} secret forms)"


def check_api_url(name: str, value: object) -> str:
    """`value` as a URL the token may be sent to, or `ConfigurationError`'s message: an http(s) URL with
    a host and no user info, and https unless the host is this machine (loopback: the sandbox)."""
    text = str(value) if isinstance(value, str) else ""
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is None or parts.scheme not in ("http", "https") or not host:
        return f"{name} must be an http(s) URL, got {redact_url(value)!r}"
    if parts.username is not None or parts.password is not None:
        return (
            f"{name} must not carry credentials ({redact_url(value)!r}): the token goes in "
            "access_token (.dlt/secrets.toml or SOURCES__PLATFORM__ACCESS_TOKEN), never in a URL"
        )
    if parts.scheme != "https" and not _is_loopback(host):
        return (
            f"{name} must use https for a host that is not this machine ({redact_url(value)!r}): over "
            "http the token would travel in clear text"
        )
    return ""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
