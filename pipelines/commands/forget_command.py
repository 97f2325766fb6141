"""The `platform-sync forget` command: its arguments, what it asks the API and the dbt room, what it prints.

The forget itself (what is blanked, where, what is kept) is `forget.py`; the records the API links to the
person (their lesson comments, by email) are asked in `forget_links.py` before the warehouse is locked.
Exit 0 when done; 3 when a linked lookup failed (the person's comments may remain: run it again); 2 on bad
usage or a held lock.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt

from pipelines.commands import forget as forgetting
from pipelines.commands.forget import FORGET_PIPELINE, forget, wanted
from pipelines.commands.forget_links import client_for, look_up
from pipelines.sync.accounts import Account
from pipelines.sync.companion import companion_pipeline
from pipelines.sync.platform_pipeline import DATASET_NAME, DEFAULT_DESTINATION, PIPELINE_NAME, make_pipeline
from pipelines.sync.preflight import check_destination_config, check_destination_name
from pipelines.webhooks.loader import WEBHOOK_PIPELINE
from pipelines.webhooks.store import DEFAULT_STORE
from sources.platform.privacy import configured_privacy
from sources.platform.privacy.forgotten import REQUESTS_TABLE
from sources.platform_client.errors import ConfigurationError

PARTIAL = 3  # a linked lookup failed: README's "partial"


@dataclass(frozen=True)
class WarehouseHooks:
    """What forget asks of the dbt room, handed down by the command line (the rooms import downward
    only: docs/architecture.md): the raw tables of a pipeline's dataset (None when the warehouse is held
    or out of reach), how to name its destination, and a rebuild of the marts (destination, dataset ->
    whether dbt succeeded)."""

    raw_tables: Callable[[dlt.Pipeline], list[str] | None]
    describe: Callable[[dlt.Pipeline], str]
    rebuild_marts: Callable[[str, str], bool]


def add_forget_command(commands: Any, hooks: WarehouseHooks) -> None:
    cmd = commands.add_parser(
        "forget",
        help="blank a person's personal data everywhere in the warehouse and the webhook store (LGPD)",
        description=forgetting.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    who = cmd.add_mutually_exclusive_group(required=True)
    who.add_argument("--email", help="the person's email (any case)")
    who.add_argument("--document", help="the person's CPF (with or without punctuation) or document")
    cmd.add_argument("--webhook-store", type=Path, default=DEFAULT_STORE, help="the receiver's SQLite store")
    cmd.add_argument("--destination", default=DEFAULT_DESTINATION)
    cmd.add_argument("--dataset", default=DATASET_NAME)
    cmd.add_argument(
        "--account", help="the account of [accounts.NAME] whose dataset to blank (docs/accounts.md)"
    )
    cmd.add_argument(
        "--drop-loaded-packages",
        action="store_true",
        help="also delete dlt's completed load packages of the sync, webhook and attendee pipelines (local "
        "copies of past loads, with the values as they were loaded)",
    )
    cmd.set_defaults(run=lambda options: run_forget(options, hooks))


def run_forget(options: argparse.Namespace, hooks: WarehouseHooks) -> int:
    check_destination_name(options.destination)
    settings = configured_privacy()
    person = wanted(settings, options.email, options.document)
    account: Account | None = None
    if options.account:  # one account's dataset only (issue 32)
        from pipelines.sync.accounts import account_pipeline, find_account

        account = find_account(options.account)
        options.dataset = account.dataset_name
        check_destination_config(account.pipeline_name, options.destination, options.dataset)
        pipeline = account_pipeline(account, options.destination)
    else:
        check_destination_config(PIPELINE_NAME, options.destination, options.dataset)  # before any state
        pipeline = make_pipeline(options.destination, options.dataset)
    _require_something_to_forget_in(pipeline, options.webhook_store, hooks)
    models_dataset = DATASET_NAME if options.account else options.dataset

    def rebuild_marts() -> bool:
        return hooks.rebuild_marts(options.destination, models_dataset)

    tables = hooks.raw_tables(pipeline) or []
    links = look_up(person.group, person.normalised, tables, lambda: client_for(account))
    result = forget(pipeline, settings, person, options.webhook_store, rebuild_marts, links.keys)
    for table, rows in sorted(result.rows.items()):
        places = result.places.get(table, rows)
        where = f" (the person at {places:,} places in them)" if places != rows else ""
        print(f"{table:50} {rows:>8,} rows blanked{where}")
    if result.deliveries:
        print(
            f"{'webhook store ' + str(options.webhook_store):50} {result.deliveries:>8,} deliveries blanked"
        )
    print(f"request {result.request_id} recorded in {options.dataset}.{REQUESTS_TABLE} (never the value)")
    if result.total == 0:
        print("the person was not found; the request is recorded all the same")
    if result.kept:
        print(
            "kept on the forgotten list: if the platform sends this person again, the next syncs blank "
            "them again on the way in (the platform itself still holds them)"
        )
    else:
        print(
            "NOT kept on a forgotten list (no privacy_key in secrets): this command cannot stop the "
            "platform from sending this person again; a later sync loads them again"
        )
    if result.reclaimed:
        print(result.reclaimed)
    for table, keys in sorted(links.keys.items()):
        print(f"{table}: {len(keys):,} records the API links to the person by {person.group[:-1]}")
    for note in links.notes:
        print(note)
    if options.drop_loaded_packages:
        dropped = drop_loaded_packages(pipeline)
        print(f"{dropped:,} completed load packages deleted from the working folders")
    for line in links.unreachable:
        print(f"forget: {line}", file=sys.stderr)
    return PARTIAL if links.unreachable else 0


def drop_loaded_packages(pipeline: dlt.Pipeline) -> int:
    """Delete the completed load packages of the sync's pipeline and of every companion that loads into
    its dataset (run records, webhook deliveries, attendee imports, forget's records): dlt keeps each past
    load in `<working folder>/load/loaded/<load id>` (`Pipeline.list_completed_load_packages`)."""
    from pipelines.commands.attendees_import import IMPORT_PIPELINE

    dropped = 0
    companions = (f"{pipeline.pipeline_name}_runs", WEBHOOK_PIPELINE, IMPORT_PIPELINE, FORGET_PIPELINE)
    present = [name for name in companions if (Path(pipeline.pipelines_dir) / name).is_dir()]  # none made
    holders = [pipeline, *(companion_pipeline(name, pipeline) for name in present)]
    for holder in holders:
        loaded = Path(holder.working_dir) / "load" / "loaded"
        for load_id in holder.list_completed_load_packages():
            folder = loaded / load_id
            if folder.is_dir():
                shutil.rmtree(folder)
                dropped += 1
    return dropped


def _require_something_to_forget_in(pipeline: dlt.Pipeline, store: Path, hooks: WarehouseHooks) -> None:
    """Refuse (exit 2, nothing recorded, no DuckDB file made) a forget that finds neither raw tables nor
    a webhook store: run from another folder than the sync's, or with another dataset, it blanked nothing
    and said "recorded", exit 0, which read as done (issue 51). A warehouse held or out of reach is left
    to `forget`, which says so under its lock."""
    if store.exists():
        return
    if hooks.raw_tables(pipeline) != []:
        return
    raise ConfigurationError(
        f"nothing to forget in: no raw tables in the dataset {pipeline.dataset_name!r} of the "
        f"{hooks.describe(pipeline)}, and no webhook store at {store}; run forget from the folder "
        "the sync runs in, or give it the --destination and --dataset (or --account) and --webhook-store "
        "the sync uses. Nothing was recorded"
    )
