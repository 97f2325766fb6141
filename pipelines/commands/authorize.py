"""`platform-sync auth`: trade an authorization code for a token with the secrets from config."""

from __future__ import annotations

from pathlib import Path

import dlt
from dlt.common.configuration import with_config

from sources.platform_client.auth import TokenGrant, exchange_code, store_token

DEFAULT_REDIRECT_URI = "http://localhost/callback"


@with_config(sections=("sources", "platform"))
def _exchange(
    code: str,
    redirect_uri: str | None = None,
    auth_url: str = dlt.config.value,
    client_id: str = dlt.secrets.value,
    client_secret: str = dlt.secrets.value,
) -> TokenGrant:
    return exchange_code(auth_url, client_id, client_secret, code, redirect_uri or DEFAULT_REDIRECT_URI)


def exchange_and_store(code: str, secrets_path: Path, redirect_uri: str | None = None) -> TokenGrant:
    """Exchange `code` and store the token and its granted scopes where the pipeline reads them."""
    grant = _exchange(code, redirect_uri)
    store_token(secrets_path, grant)
    return grant
