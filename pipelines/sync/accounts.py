"""Accounts as configuration: `[accounts.<name>]` tables in `.dlt/config.toml`, tokens in secrets.

    [accounts.acme]                          # .dlt/config.toml
    event_ids = ["4f6c3a1e-..."]
    community_ids = [12]
    schools = [{team_slug = "acme-school", student_slugs = ["ana-lima"]}]

    [accounts.acme]                          # .dlt/secrets.toml (or ACCOUNTS__ACME__ACCESS_TOKEN)
    access_token = "..."

An account's table holds any setting of `[sources.platform]` (any argument of `platform_source`); what
it does not set comes from `[sources.platform]` as for a single account. Its token must be its own:
an account never falls back to `sources.platform.access_token`, which would load another seller's data
into its dataset. The account named `default` is the single-account setup of today (pipeline
`platform_sync`, dataset `platform_raw`, token and settings from `[sources.platform]`); its table may
be empty.

Every account is a dlt pipeline of its own, `platform_sync__<name>`, loading the dataset
`platform_raw_<name>`: its own state, working folder, run lock, schema (docs/accounts.md).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dlt
from dlt.common.runtime.collector import Collector

from pipelines.sync.platform_pipeline import DATASET_NAME, DEFAULT_DESTINATION, PIPELINE_NAME, make_pipeline
from sources.platform import platform_source
from sources.platform_client.errors import ConfigurationError

ACCOUNTS_SECTION = "accounts"
DEFAULT_ACCOUNT = "default"
# lowercase letters, digits and single underscores, a letter first: a legal unquoted identifier on
# DuckDB, PostgreSQL, BigQuery and Snowflake once prefixed (`platform_raw_<name>`: dlt's naming would fold
# a `__`), and never a `__` that dlt reads as a section separator (ACCOUNTS__<NAME>__ACCESS_TOKEN)
NAME_PATTERN = re.compile(r"[a-z](?:_?[a-z0-9])*")
MAX_NAME_LENGTH = (
    40  # `platform_raw_` + 40 + `_staging` stays within PostgreSQL's 63 bytes with dlt's suffixes
)
TOKEN_KEY = "access_token"  # noqa: S105 - the name of the setting
# Arguments only code passes; `access_token` is read on its own (a secret)
_NOT_SETTINGS = frozenset({"client", "report", TOKEN_KEY})
# The token exchange's settings, read by `platform-sync auth --account NAME` (commands/authorize.py), never
# by the sync: an account's table takes them as `[sources.platform]` does
AUTH_KEYS = frozenset({"auth_url", "client_id", "client_secret", "redirect_uri"})


@dataclass(frozen=True)
class Account:
    """One producer account: its name, and the dlt pipeline and dataset that hold its data."""

    name: str
    pipeline_name: str
    dataset_name: str


def account_named(name: str) -> Account:
    """The account `name` with its pipeline and dataset names; a ConfigurationError for a bad name."""
    check_account_name(name)
    if name == DEFAULT_ACCOUNT:
        return Account(name, PIPELINE_NAME, DATASET_NAME)
    return Account(name, f"{PIPELINE_NAME}__{name}", f"{DATASET_NAME}_{name}")


def check_account_name(name: str) -> str:
    if name == "staging" or name.endswith("_staging"):
        raise ConfigurationError(
            f"the account name {name!r} cannot be used: dlt's staging dataset of another account would "
            f"have its dataset's name; rename [accounts.{name}] (a name not ending in _staging)"
        )
    if not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ConfigurationError(
            f"the account name {name!r} cannot be used: rename [accounts.{name}] to lowercase letters, "
            f"digits and single underscores, starting with a letter, at most {MAX_NAME_LENGTH} characters "
            "(e.g. [accounts.acme_store])"
        )
    return name


def configured_accounts() -> list[Account]:
    """The accounts of `[accounts.*]` in config and secrets, in the order first met; [] when none."""
    return [account_named(name) for name in _account_tables()]


def find_account(name: str) -> Account:
    """The configured account `name`, or a ConfigurationError listing the configured ones."""
    accounts = configured_accounts()
    for account in accounts:
        if account.name == name:
            return account
    listed = ", ".join(account.name for account in accounts) or "none"
    raise ConfigurationError(
        f"no account named {name!r} is configured (configured: {listed}); add an [accounts.{name}] table "
        "to .dlt/config.toml (docs/accounts.md)"
    )


def account_source_options(account: Account) -> dict[str, Any]:
    """The arguments of `platform_source` that the account sets, its token included.

    The `default` account sets none beyond its table: it reads `[sources.platform]` as today."""
    table = _account_tables().get(account.name, {})
    settings = {key: value for key, value in table.items() if key not in AUTH_KEYS}
    known = set(inspect.signature(platform_source).parameters) - {"client", "report"}
    unknown = sorted(key for key in settings if key not in known)
    if unknown:
        raise ConfigurationError(
            f"[accounts.{account.name}] has {', '.join(unknown)}, which no setting of an account reads: "
            f"an account takes the settings of [sources.platform] (e.g. event_ids, community_ids, schools, "
            "sale_ids, base_url, auth_url) and its access_token (docs/accounts.md)"
        )
    hints = typing.get_type_hints(inspect.unwrap(platform_source))
    for key in sorted(known - _NOT_SETTINGS):  # environment variables win over the TOML tables
        value: Any = dlt.config.get(f"{ACCOUNTS_SECTION}.{account.name}.{key}", _config_type(hints.get(key)))
        if value is not None:
            settings[key] = value
    token: Any = dlt.secrets.get(f"{ACCOUNTS_SECTION}.{account.name}.{TOKEN_KEY}")
    if token:
        settings[TOKEN_KEY] = str(token)
    elif account.name != DEFAULT_ACCOUNT:
        raise ConfigurationError(
            f"the account {account.name!r} has no access token: set access_token under "
            f"[accounts.{account.name}] in .dlt/secrets.toml, or "
            f"ACCOUNTS__{account.name.upper()}__ACCESS_TOKEN "
            "(each account uses its own token, never [sources.platform]'s)"
        )
    return settings


def _config_type(hint: Any) -> Any:
    """The type dlt coerces an account's setting to (an environment variable is text): a list, a table,
    or the argument's plain type; None to take the value as it comes."""
    options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(options) == 1:
        hint = options[0]
    origin = typing.get_origin(hint) or hint
    if origin in (Sequence, list):
        return list
    if origin in (Mapping, dict):
        return dict
    return hint if hint in (str, int, float, bool) else None


def _account_tables() -> dict[str, Mapping[str, Any]]:
    """`[accounts]` merged over every config provider (environment, secrets.toml, config.toml...):
    dlt returns a table from the first provider that has one, which would hide the others' accounts."""
    merged: dict[str, dict[str, Any]] = {}
    for provider in reversed(list(dlt.config.config_providers)):
        value, _ = provider.get_value(ACCOUNTS_SECTION, Any, None)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise ConfigurationError(
                "[accounts] must hold one table per account, e.g. [accounts.acme] event_ids = [...] "
                "(docs/accounts.md)"
            )
        for name, table in value.items():
            if not isinstance(table, Mapping):
                raise ConfigurationError(
                    f"accounts.{name} must be a table of settings, e.g. [accounts.{name}] event_ids = [] "
                    "(docs/accounts.md)"
                )
            merged.setdefault(str(name), {}).update(table)
    return dict(merged)


def account_pipeline(
    account: Account, destination: str = DEFAULT_DESTINATION, progress: bool | Collector = False
) -> dlt.Pipeline:
    """The account's dlt pipeline (`platform_sync__<name>` into `platform_raw_<name>`; the `default`
    account's is today's `platform_sync` into `platform_raw`), on the shared warehouse."""
    return make_pipeline(
        destination, account.dataset_name, progress=progress, pipeline_name=account.pipeline_name
    )
