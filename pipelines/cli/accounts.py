"""`platform-sync sync --account NAME` / `--all-accounts`: the command line over `sync_accounts`.

Each account's summary as `platform-sync sync` prints it, then one line per account with its own exit
status; the command's exit status is `overall_exit_status` (0 every account loaded, 3 some did and
others failed or were partial, 1 or 2 when none did). Each account's reasons go to stderr, one line per
cause, prefixed with the account's name.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from pipelines.accounts.run import DEFAULT_AT_ONCE, AccountRun, overall_exit_status, sync_accounts
from pipelines.cli.output import is_json, print_json, say
from pipelines.cli.summary import print_summary
from pipelines.cli.sync_request import sync_request
from pipelines.sync.accounts import Account, configured_accounts, find_account
from pipelines.sync.platform_pipeline import DATASET_NAME
from sources.platform_client.errors import ConfigurationError

OUTCOMES = {0: "loaded", 1: "FAILED", 2: "NOT STARTED (configuration)", 3: "PARTIAL"}


def add_account_options(command: argparse.ArgumentParser, *, many: bool = True) -> None:
    """`--account NAME` (repeatable when `many`), and with `many` `--all-accounts`, `--accounts-at-once`."""
    command.add_argument(
        "--account",
        action="append" if many else "store",
        metavar="NAME",
        help="an account of [accounts.NAME] in .dlt/config.toml" + (" (repeatable)" if many else ""),
    )
    if many:
        command.add_argument(
            "--all-accounts", action="store_true", help="every account of [accounts.*], a few at a time"
        )
        command.add_argument(
            "--accounts-at-once",
            type=int,
            default=DEFAULT_AT_ONCE,
            metavar="N",
            help=f"accounts synced together (default {DEFAULT_AT_ONCE})",
        )


def wants_accounts(options: argparse.Namespace) -> bool:
    return bool(getattr(options, "account", None) or getattr(options, "all_accounts", False))


def selected_accounts(options: argparse.Namespace) -> list[Account]:
    """The accounts the command line names; a ConfigurationError for an unknown one or none at all."""
    if getattr(options, "dataset", DATASET_NAME) != DATASET_NAME:
        raise ConfigurationError(
            "--dataset cannot be combined with --account or --all-accounts: each account loads its own "
            "dataset, platform_raw_<account> (docs/accounts.md)"
        )
    if getattr(options, "all_accounts", False):
        if options.account:
            raise ConfigurationError("give either --all-accounts or --account NAME, not both")
        accounts = configured_accounts()
        if not accounts:
            raise ConfigurationError(
                "--all-accounts: no account is configured; add [accounts.NAME] tables to .dlt/config.toml "
                "(docs/accounts.md)"
            )
        return accounts
    names = options.account if isinstance(options.account, list) else [options.account]
    return [find_account(name) for name in dict.fromkeys(names)]


def run_accounts_sync(options: argparse.Namespace) -> int:
    """`platform-sync sync` for the accounts the options name."""
    accounts = selected_accounts(options)
    request = sync_request(options)
    resources, source_options = request.resources, request.source_options
    runs = sync_accounts(
        accounts,
        resources,
        at_once=options.accounts_at_once,
        full_refresh=options.full_refresh,
        source_options=source_options,
        destination=options.destination,
        on_done=lambda run: say(f"account {run.name}: {_outcome(run)}", event="account"),
    )
    status = overall_exit_status(runs)
    if is_json():
        print_json({"event": "summary", "exit_status": status, "accounts": [_json(run) for run in runs]})
    else:
        print_accounts(runs, status)
    for run in runs:
        for line in run.message.split("; ") if run.message else []:
            say(f"account {run.name}: {line}", event="exit")
    return status


def print_accounts(runs: Sequence[AccountRun], status: int, out: TextIO = sys.stdout) -> None:
    """Each account's summary, then a line per account with its exit status, then the verdict."""
    for run in runs:
        if run.result is not None:
            print(f"\n=== account {run.name}", file=out)
            print_summary(run.result, out, status=run.exit_status)
    print("", file=out)
    print(f"{'account':40} {'exit status':>12}  outcome", file=out)
    for run in runs:
        print(f"{run.name:40} {run.exit_status:>12}  {OUTCOMES.get(run.exit_status, 'FAILED')}", file=out)
    failed = [run.name for run in runs if run.exit_status != 0]
    if status == 0:
        print(f"all {len(runs)} accounts loaded (exit status 0).", file=out)
    else:
        print(
            f"{len(runs) - len(failed)} of {len(runs)} accounts fully loaded; not: "
            f"{', '.join(failed)} (exit status {status}; the reasons are on stderr).",
            file=out,
        )


def _outcome(run: AccountRun) -> str:
    return f"exit status {run.exit_status} ({OUTCOMES.get(run.exit_status, 'FAILED')})"


def _json(run: AccountRun) -> dict[str, object]:
    result = run.result
    return {
        "account": run.name,
        "exit_status": run.exit_status,
        "failure": run.message or None,
        "rows": result.rows if result else {},
        "requests": result.requests if result else {},
        "resources": run.outcomes,
    }
