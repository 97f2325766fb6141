"""Checks of the `[sources.platform]` configuration that dlt does not make, before any request.

dlt resolves only the keys `platform_source` asks for: a misspelled key (`sales_max_request`) would be
ignored silently and the setting left at its default. `check_source_config` names every key that no
part of platform-sync reads, with the closest known key, wherever it was set (config.toml, secrets.toml,
`SOURCES__PLATFORM__*`). `explain` turns dlt's own errors while it resolves the arguments (a value that
cannot be coerced, a secret in config.toml) into a message that names the key, the value and an example.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import dlt
from dlt.common.configuration.exceptions import ConfigValueCannotBeCoercedException, ValueNotSecretException
from dlt.common.configuration.providers import SettingsTomlProvider

from sources.platform_client.errors import ConfigurationError

SECTION = ("sources", "platform")
ENV_PREFIX = "SOURCES__PLATFORM__"
# Keys read outside `platform_source`: `platform-sync auth` (auth_url, client_id, client_secret,
# redirect_uri) and `platform-sync webhooks` (webhook_secret).
READ_ELSEWHERE = frozenset({"auth_url", "client_id", "client_secret", "redirect_uri", "webhook_secret"})
# dlt's narrower section for the source function's own arguments: `[sources.platform.platform_source]`.
FUNCTION_SECTION = "platform_source"
SECRETS = frozenset({"access_token", "client_secret", "webhook_secret", "privacy_key"})
# Arguments only code passes, never config.
NOT_CONFIG = frozenset({"client", "report", "now", "run_starts"})

# What each kind of setting must be, with an example, for the messages.
EXAMPLES: dict[str, tuple[str, str]] = {
    "base_url": ("an address", 'base_url = "https://api.example.com"'),
    "access_token": ("a token (in .dlt/secrets.toml)", 'access_token = "..."'),
    "start_date": ("a date", 'start_date = "2024-01-01"'),
    "event_ids": ("a list of event ids", 'event_ids = ["4f6c3a1e-..."]'),
    "community_ids": ("a list of numeric ids", "community_ids = [12, 34]"),
    "sale_ids": ("a list of sale ids", 'sale_ids = ["100000001"]'),
    "course_ids": ("a list of numeric ids", "course_ids = [7]"),
    "schools": (
        "an array of tables",
        'schools = [{team_slug = "my-school", student_slugs = ["ana-lima"], delivery_ids = [12]}]',
    ),
    "rescan_hours_by_resource": ("a table of resource = hours", "rescan_hours_by_resource = {products = 24}"),
    "rate_limits": ("a table of operation = requests per minute", "rate_limits = {sale_details = 30}"),
    "granted_scopes": ("a list of scopes", 'granted_scopes = ["store_sales_read"]'),
    "privacy": ("a table of group = keep | hash | block", 'privacy = {emails = "hash", documents = "hash"}'),
    "rescan": ("true or false", "rescan = false"),
    "strict": ("true or false", "strict = false"),
    "arrow_pages": ("true or false", "arrow_pages = true"),
    "decode_workers": ("a whole number", "decode_workers = 1"),
    "sales_recheck_hours": ("a number", "sales_recheck_hours = 0"),
    "unknown_ids_share": ("a number above 0 and below 1", "unknown_ids_share = 0.1"),
    "rescan_hours": ("a number", "rescan_hours = 6"),
    "rate_limit_time_scale": ("a number", "rate_limit_time_scale = 1.0"),
    "max_retries": ("a whole number", "max_retries = 6"),
    "patience_seconds": ("a number of seconds", "patience_seconds = 300"),
    "scan_budget_share": ("a number from 0 to less than 1", "scan_budget_share = 0.1"),
    "details_budget_share": ("a number above 0 and at most 1", "details_budget_share = 0.8"),
    "unlisted_rate_limit": ("a number of requests per minute", "unlisted_rate_limit = 60"),
    "run_interval_hours": ("a number of hours", "run_interval_hours = 1"),
}
# Keys that were read once and are no more, with what replaced them.
REPLACED = {
    "cheap_scan_max_requests": "replaced by scan_budget_share (how often a whole list is read now follows "
    "from its cost, its rate limit and the interval between runs); remove it, or set scan_budget_share = 0 "
    "to read every full scan only every rescan_hours",
}
WHOLE_NUMBER_DEFAULTS = {
    "items_per_page": 100,
    "community_days": 30,
    "fiscal_documents_window_days": 30,
    "fiscal_documents_lag_days": 15,
    "subscriptions_window_days": 90,
    "sales_max_requests": 5000,
    "sales_refresh_days": 30,
    "sales_concurrency": 4,
}
EXAMPLES.update({key: ("a whole number", f"{key} = {value}") for key, value in WHOLE_NUMBER_DEFAULTS.items()})
LISTS = ("event_ids", "community_ids", "sale_ids", "course_ids", "granted_scopes")


def check_source_config(parameters: Collection[str], resources: Collection[str] = ()) -> None:
    """Refuse keys under `[sources.platform]` that nothing reads (`parameters`: the source function's),
    and list-valued settings given as a single string, with a `ConfigurationError` naming each one."""
    known = (set(parameters) - NOT_CONFIG) | READ_ELSEWHERE
    sections = set(resources)  # dlt's per-resource sections, [sources.platform.<resource>]
    problems: list[str] = []
    for origin, key, value in configured_values():
        if key == FUNCTION_SECTION and isinstance(value, Mapping):
            problems += [
                _unknown(origin, f"{key}.{inner}", inner, known) for inner in value if inner not in known
            ]
            continue
        if key not in known and not (key in sections and isinstance(value, Mapping)):
            problems.append(_unknown(origin, key, key, known))
    if problems:
        raise ConfigurationError("; ".join(problems))


def _unknown(origin: str, shown: str, key: str, known: Collection[str]) -> str:
    if key in REPLACED:
        return f"{shown} in [sources.platform] ({origin}) is {REPLACED[key]}"
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f": did you mean {close[0]}?" if close else f"; the keys are: {', '.join(sorted(known))}"
    return f"unknown key {shown} in [sources.platform] ({origin}){hint}"


def configured_values() -> Iterator[tuple[str, str, Any]]:
    """(where, key, value) of every key set under `[sources.platform]`: in the environment
    (`SOURCES__PLATFORM__KEY`, first level only) and in every TOML file dlt reads."""
    for name, value in os.environ.items():
        if name.startswith(ENV_PREFIX) and name != ENV_PREFIX:
            key = name[len(ENV_PREFIX) :].split("__", 1)[0].lower()
            yield f"environment variable {name}", key, value
    # dlt's public provider API: every provider dlt reads, in its lookup order (`dlt.config` lists them
    # all, secrets.toml included), asked for the section as a whole. Only the TOML files: a vault would
    # be a request per key, and the environment is read above.
    for provider in dlt.config.config_providers:
        if not isinstance(provider, SettingsTomlProvider):
            continue
        section, _ = provider.get_value(SECTION[-1], Any, None, *SECTION[:-1])  # type: ignore[arg-type]
        if isinstance(section, Mapping):
            for key, value in section.items():
                yield provider.name, str(key), value


def check_list(name: str, value: Any) -> None:
    """A list setting given as one string (`student_slugs = "one-slug"`) is refused: walked as a list it
    would be its letters."""
    if isinstance(value, str | bytes) or (value is not None and isinstance(value, Mapping)):
        kind, example = EXAMPLES.get(name.rsplit(".", 1)[-1], ("a list", f'{name} = ["..."]'))
        raise ConfigurationError(f"{name} must be {kind}, e.g. {example}; got {value!r}")


def explain(exc: Exception) -> str | None:
    """What to tell the user about an error dlt raised while resolving the source's configuration, or
    None if it is not one of those."""
    if isinstance(exc, ConfigValueCannotBeCoercedException):
        kind, example = EXAMPLES.get(exc.field_name, ("of another type", f"{exc.field_name} = ..."))
        shown = "(a secret, not shown)" if exc.field_name in SECRETS else repr(exc.field_value)
        return f"{exc.field_name} must be {kind}, e.g. {example}; got {shown}"
    if isinstance(exc, ValueNotSecretException):
        key = exc.key.rsplit(".", 1)[-1]
        return (
            f"{key} is a secret and cannot be set in {exc.provider_name}: move it to .dlt/secrets.toml "
            f"(under [sources.platform]) or set it as {ENV_PREFIX}{key.upper()}"
        )
    return None
