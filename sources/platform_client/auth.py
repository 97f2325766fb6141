"""Bearer authentication, the authorization-code exchange (spec part 5) and storing the token.

The exchange is tried once: the code is single-use, so a retry after a lost answer would only turn a
transient failure into a confusing "already used" 404.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Generator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import tomlkit

from sources.platform_client.errors import (
    ConfigurationError,
    MalformedResponseError,
    TokenExchangeError,
    TransportError,
    parse_error_body,
)
from sources.platform_client.operations import get_operation
from sources.platform_client.redaction import SENSITIVE_KEYS, Redactor, check_api_url, redact_url

logger = logging.getLogger("platform_sync.client")

SECRETS_SECTION = ("sources", "platform")
USER_AGENT = "platform-sync/0.1 (+httpx)"


class BearerAuth(httpx.Auth):
    """Sends `Authorization: Bearer <token>` (contracts part 1: on every operation)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(token=***)"


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """The result of a token exchange. `raw` is the response without its secret fields."""

    access_token: str = field(repr=False)
    token_type: str
    scopes: frozenset[str]
    raw: Mapping[str, Any] = field(default_factory=dict)


def _without_secrets(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key.lower() not in SENSITIVE_KEYS}


def parse_scopes(value: object) -> frozenset[str]:
    """Scopes of a `scope` value: space-separated per the spec; commas tolerated."""
    if not isinstance(value, str):
        return frozenset()
    return frozenset(part for part in re.split(r"[\s,]+", value) if part)


def exchange_code(
    auth_url: str,
    client_id: str,
    client_secret: str,
    code: str,
    redirect_uri: str,
    transport: httpx.BaseTransport | None = None,
    *,
    timeout: float = 30.0,
) -> TokenGrant:
    """Trade an authorization code for an access token at `{auth_url}/oauth/token`."""
    required = {
        "auth_url": auth_url,
        "client_id": client_id,
        "client_secret": client_secret,
        "code": code,
        "redirect_uri": redirect_uri,
    }
    empty = [name for name, value in required.items() if not value or not value.strip()]
    if empty:
        raise ConfigurationError(f"token exchange: {', '.join(empty)} empty")
    if problem := check_api_url("auth_url", auth_url):
        raise ConfigurationError(problem)
    operation = get_operation("token_exchange")
    redactor = Redactor([client_secret, code])
    url = auth_url.rstrip("/") + operation.path
    body = {
        "client_id": client_id,
        "client_secret": client_secret,
        "code": code,
        "redirect_uri": redirect_uri,
        "grant_type": "authorization_code",
    }
    try:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        with httpx.Client(transport=transport, timeout=timeout, headers=headers) as http:
            response = http.request(operation.method, url, json=body)
    except httpx.HTTPError as exc:
        raise TransportError(
            f"token exchange: no answer from {redact_url(url)} ({type(exc).__name__}: "
            f"{redactor(str(exc))}); check auth_url and the network",
            operation=operation.name,
        ) from exc
    logger.debug("%s POST %s -> %d", operation.name, redact_url(url), response.status_code)
    if response.status_code not in operation.success_statuses:
        error = parse_error_body(response.content, response.reason_phrase, redactor.redact)
        if response.status_code == 404:
            advice = "the code was already used, or the application is unknown: authorize again"
        else:
            advice = "check client_id, client_secret and redirect_uri, then authorize again"
        raise TokenExchangeError(
            f"token exchange failed ({response.status_code}: {error.message}): {advice}",
            operation=operation.name,
            status=response.status_code,
            error_code=error.error_code,
            server_message=error.message,
            url=redact_url(url),
        )
    try:
        data = json.loads(response.content)
    except ValueError:
        data = None
    token = data.get("access_token") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(token, str) or not token:
        raise MalformedResponseError(
            "token exchange: the answer carries no access_token; authorize again",
            operation=operation.name,
        )
    token_type = data.get("token_type")
    return TokenGrant(
        access_token=token,
        token_type=token_type if isinstance(token_type, str) else "bearer",
        scopes=parse_scopes(data.get("scope")),
        raw=_without_secrets(data),
    )


def _section(
    document: tomlkit.TOMLDocument, path: Path, section: Sequence[str] = SECRETS_SECTION
) -> MutableMapping[str, Any]:
    """The table `section` (`[sources.platform]`) of `document`, created if absent."""
    container: Any = document
    for key in section:
        if key not in container:
            container[key] = tomlkit.table(is_super_table=key != section[-1])
        container = container[key]
        # A table, an inline table or tomlkit's proxy for a table split across the file all qualify.
        if not isinstance(container, MutableMapping):
            raise ConfigurationError(
                f"{path}: `{'.'.join(section)}` must be a table, found {type(container).__name__}; "
                "fix the file by hand"
            )
    return container


def store_token(secrets_path: Path, grant: TokenGrant, section: Sequence[str] = SECRETS_SECTION) -> None:
    """Write `access_token` and `granted_scopes` under `section` of a dlt secrets file: `[sources.platform]`,
    or an account's `[accounts.<name>]`.

    Everything else in the file (other keys, comments, layout) is kept. The file is written with mode 0600
    (only its owner may read a token), and replaced atomically, so an interrupted write never leaves a
    half-written secrets file.
    """
    secrets_path = Path(secrets_path)
    existed = secrets_path.exists()
    document = tomlkit.parse(secrets_path.read_text(encoding="utf-8")) if existed else tomlkit.document()
    table = _section(document, secrets_path, section)
    table["access_token"] = grant.access_token
    scopes = tomlkit.array()
    scopes.extend(sorted(grant.scopes))
    table["granted_scopes"] = scopes
    mode = 0o600
    secrets_path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".secrets.", suffix=".toml", dir=secrets_path.parent)
    try:
        os.fchmod(descriptor, mode)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(tomlkit.dumps(document))
        os.replace(temporary, secrets_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    logger.info("stored an access token with scopes %s in %s", ", ".join(sorted(grant.scopes)), secrets_path)
