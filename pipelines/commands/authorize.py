"""`platform-sync auth`: trade an authorization code for a token with the secrets from config.

`--account NAME` authorizes an account (docs/accounts.md): its `auth_url`, `client_id`, `client_secret`
and `redirect_uri` come from `[accounts.NAME]` where it sets them, else from `[sources.platform]` (an
agency's one app serves every seller), and its token is stored under `[accounts.NAME]`, never under
`[sources.platform]`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
from dlt.common.configuration import with_config

from pipelines.sync.accounts import ACCOUNTS_SECTION, find_account
from sources.platform_client.auth import SECRETS_SECTION, TokenGrant, exchange_code, store_token
from sources.platform_client.errors import ConfigurationError

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


def _account_setting(account: str, key: str, secret: bool) -> Any:
    """`[accounts.<account>].<key>`, else `[sources.platform].<key>` (environment variables first)."""
    read = dlt.secrets.get if secret else dlt.config.get
    for section in ((ACCOUNTS_SECTION, account), SECRETS_SECTION):
        value: Any = read(".".join((*section, key)))
        if value not in (None, ""):
            return value
    return None


def _exchange_for_account(account: str, code: str, redirect_uri: str | None) -> TokenGrant:
    settings = {
        "auth_url": _account_setting(account, "auth_url", secret=False),
        "client_id": _account_setting(account, "client_id", secret=True),
        "client_secret": _account_setting(account, "client_secret", secret=True),
    }
    missing = [key for key, value in settings.items() if value is None]
    if missing:
        raise ConfigurationError(
            f"the account {account!r} cannot be authorized: set {', '.join(missing)} under "
            f"[accounts.{account}] or [sources.platform] (.dlt/config.toml, the client's under secrets.toml)"
        )
    uri = redirect_uri or _account_setting(account, "redirect_uri", secret=False) or DEFAULT_REDIRECT_URI
    return exchange_code(
        str(settings["auth_url"]), str(settings["client_id"]), str(settings["client_secret"]), code, str(uri)
    )


def exchange_and_store(
    code: str, secrets_path: Path, redirect_uri: str | None = None, account: str | None = None
) -> TokenGrant:
    """Exchange `code` and store the token and its granted scopes where the pipeline reads them: under
    `[sources.platform]`, or under `[accounts.<account>]` for a configured account."""
    if account is None:
        grant = _exchange(code, redirect_uri)
        store_token(secrets_path, grant)
        return grant
    name = find_account(account).name  # a configured account, or one line listing them
    grant = _exchange_for_account(name, code, redirect_uri)
    store_token(secrets_path, grant, (ACCOUNTS_SECTION, name))
    return grant
