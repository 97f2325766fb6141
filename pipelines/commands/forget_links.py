"""What the API links to a person being forgotten but does not name by their identifier (issue 49).

A lesson comment holds only its author's name; the API's comment list filters by the author's `email`
(spec 4, `list_lesson_comments`). So `forget --email` asks the API for the person's comments
(`fields.LINKED`), and forget blanks those rows and keeps their ids on the forgotten list. A forget by
document cannot ask: the API links comments by email only, and the command says so.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import dlt

from pipelines.sync.accounts import Account, account_source_options
from sources.platform.privacy.fields import LINKED, Linked
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import ConfigurationError, PlatformError


@dataclass
class LinkedFound:
    """The keys of the person's linked records, by table, and the lines that say what could not be done."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    unreachable: list[str] = field(default_factory=list)  # looked up and failed: the forget is partial
    notes: list[str] = field(default_factory=list)  # not asked, by design (a forget by document)


def look_up(
    group: str, value: str, tables: Collection[str], client: Callable[[], PlatformClient]
) -> LinkedFound:
    """The person's records of each linked table present in the warehouse (`tables`), asked of the API by
    `value` of `group`; a client is made only when there is something to ask."""
    found = LinkedFound()
    wanted = [linked for linked in LINKED if linked.table in tables]
    asked = [linked for linked in wanted if linked.group == group]
    for linked in wanted:
        if linked.group != group:
            found.notes.append(
                f"{linked.table}: the API links them to a person by {linked.group[:-1]} only; to blank this "
                f"person's {linked.table.replace('_', ' ')}, run forget with --{linked.query} as well"
            )
    if not asked:
        return found
    try:
        api = client()
    except ConfigurationError as exc:
        for linked in asked:
            found.unreachable.append(_cannot(linked, f"no API to ask: {exc}"))
        return found
    with api:
        for linked in asked:
            try:
                found.keys[linked.table] = _keys(api, linked, value)
            except PlatformError as exc:
                found.unreachable.append(_cannot(linked, _first_line(exc)))
    return found


def _keys(api: PlatformClient, linked: Linked, value: str) -> set[str]:
    keys: set[str] = set()
    for page in api.paginate(linked.operation, None, {linked.query: value}, distinct=True):
        keys.update(str(item[linked.key]) for item in page.items if item.get(linked.key) is not None)
    return keys


def _cannot(linked: Linked, why: str) -> str:
    return (
        f"{linked.table}: the person's records could not be looked up ({why}); their "
        f"{', '.join(linked.blanked)} may remain there: run forget again once the API answers"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def client_for(account: Account | None) -> PlatformClient:
    """The API client of the account forgotten in (`--account`), or of `[sources.platform]`, configured as
    the sync configures it; a ConfigurationError when its address or token is not set."""
    from pipelines.commands.attendees_import import client_from_config

    if account is None:
        return client_from_config()
    options = account_source_options(account)
    base_url = options.get("base_url") or dlt.config.get("sources.platform.base_url")
    token = options.get("access_token")
    if not base_url or not token:
        raise ConfigurationError(f"[accounts.{account.name}] has no base_url or access_token")
    return PlatformClient(
        str(base_url),
        str(token),
        rate_limits=dict(options.get("rate_limits") or {}),
        rate_limit_time_scale=float(options.get("rate_limit_time_scale") or 1.0),
        max_retries=int(options.get("max_retries") or 6),
    )
