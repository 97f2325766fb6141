"""The `platform-sync webhooks serve|load` commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dlt

from pipelines.sync.platform_pipeline import DATASET_NAME, DEFAULT_DESTINATION
from pipelines.sync.preflight import check_destination_name
from pipelines.sync.verdict import EXIT_OK, EXIT_PARTIAL
from pipelines.webhooks.store import DEFAULT_STORE, SetAside
from sources.platform_client.errors import ConfigurationError

SECRET_KEY = "sources.platform.webhook_secret"  # noqa: S105 - the config key, not a secret
SHOWN = 3  # deliveries named in the line that says some were set aside


def add_commands(commands: Any) -> None:
    """Add `webhooks serve` and `webhooks load` to the command line's subparsers."""
    webhooks = commands.add_parser("webhooks", help="receive the platform's webhooks and load them")
    actions = webhooks.add_subparsers(dest="webhooks_command", required=True)
    serve = actions.add_parser(
        "serve",
        help="receive deliveries (x-signature checked with [sources.platform] webhook_secret), store them",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument(
        "--port", type=int, default=8410, help="port; 0 picks a free one (default: %(default)s)"
    )
    serve.add_argument("--store", type=Path, default=DEFAULT_STORE, help="SQLite file (default: %(default)s)")
    serve.set_defaults(run=run_serve)
    load = actions.add_parser("load", help="load the stored deliveries into the warehouse (webhook_events)")
    load.add_argument("--store", type=Path, default=DEFAULT_STORE, help="SQLite file (default: %(default)s)")
    load.add_argument("--destination", default=DEFAULT_DESTINATION)
    load.add_argument("--dataset", default=DATASET_NAME)
    load.set_defaults(run=run_load)


def webhook_secret() -> str:
    """The signing secret from dlt's secrets (`.dlt/secrets.toml` or SOURCES__PLATFORM__WEBHOOK_SECRET)."""
    secret: Any = dlt.secrets.get(SECRET_KEY)
    if not isinstance(secret, str) or not secret:
        raise ConfigurationError(
            "missing webhook_secret: set it under [sources.platform] in .dlt/secrets.toml (the secret the "
            "platform signs deliveries with) or as SOURCES__PLATFORM__WEBHOOK_SECRET"
        )
    return secret


def run_serve(options: argparse.Namespace) -> int:
    from pipelines.webhooks.receiver import serve
    from pipelines.webhooks.store import DeliveryStore

    secret = webhook_secret()
    store = DeliveryStore(options.store)

    def listening(url: str) -> None:
        print(f"receiving webhooks on {url} (store {options.store}); stop with Ctrl+C", flush=True)

    try:
        serve(store, secret, options.host, options.port, listening)
    finally:
        store.close()
    return 0


def run_load(options: argparse.Namespace) -> int:
    """Exit 0 when every new delivery loaded, 3 (partial) when some were set aside, said in one line."""
    from pipelines.webhooks.loader import WEBHOOK_TABLE, load_deliveries

    check_destination_name(options.destination)
    result = load_deliveries(options.store, options.destination, options.dataset)
    if result.loaded:
        table = f"{options.dataset}.{WEBHOOK_TABLE}"
        print(f"loaded {result.loaded} deliveries into {table} (load {result.load_id})")
        if result.replaced:
            print(f"{_deliveries(result.replaced)} loaded with U+FFFD in place of a lone surrogate")
    else:
        print("no new deliveries to load")
    if not result.set_aside:
        return EXIT_OK
    print(set_aside_line(result.set_aside, options.store), file=sys.stderr)
    return EXIT_PARTIAL


def set_aside_line(aside: Sequence[SetAside], store: Path) -> str:
    """One line: how many deliveries were set aside, the first few with their reasons, where they are."""
    shown = "; ".join(f"{delivery.id}: {delivery.reason}" for delivery in aside[:SHOWN])
    more = f"; and {len(aside) - SHOWN} more" if len(aside) > SHOWN else ""
    return (
        f"{_deliveries(len(aside))} set aside, not loaded and not retried ({shown}{more}); the others "
        f"loaded. Kept in {store} (table deliveries, column set_aside)"
    )


def _deliveries(count: int) -> str:
    return f"{count} {'delivery' if count == 1 else 'deliveries'}"
