"""The commands that write to the platform or listen to it (issue 17), added to `platform-sync`:
`attendees import`, `cart create`, `webhooks serve|load`. Kept here so cli.py only calls one function."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pipelines.sync.platform_pipeline import DATASET_NAME, DEFAULT_DESTINATION
from pipelines.sync.preflight import check_destination_name
from pipelines.webhooks.cli import add_commands as add_webhook_commands
from sources.platform_client.errors import ConfigurationError


def add_write_commands(commands: Any) -> None:
    """Add the write and webhook commands to the command line's subparsers."""
    attendees = commands.add_parser("attendees", help="write to events' attendee lists")
    actions = attendees.add_subparsers(dest="attendees_command", required=True)
    imports = actions.add_parser(
        "import",
        help="add the people of a CSV (or of a SQL query on the warehouse) to an event's attendee list",
        description=(
            "Columns: name, email, document (CPF or passport), phone, optional document_type (cpf|passport). "
            "Rows are validated before any request; people already on the list (by document or email) are "
            "skipped, so a rerun creates nothing twice; requests are paced at 30 per minute. Outcomes go "
            "to a results CSV and to the warehouse table attendee_imports. Exit 0: every row created or "
            "already there; 3: some rows invalid or rejected; 1: stopped (token, permission, event)."
        ),
    )
    source = imports.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", type=Path, help="CSV file with a header line")
    source.add_argument("--query", help="SQL on the sync's destination returning the same columns")
    imports.add_argument("--event", required=True, help="event id")
    imports.add_argument("--ticket", required=True, help="ticket id (of that event)")
    imports.add_argument("--use-stock", action="store_true", help="debit each ticket from the lot's stock")
    imports.add_argument("--dry-run", action="store_true", help="validate and compare, send nothing")
    imports.add_argument("--results", type=Path, help="results CSV (default: next to the input)")
    imports.add_argument("--destination", default=DEFAULT_DESTINATION)
    imports.add_argument("--dataset", default=DATASET_NAME)
    imports.set_defaults(run=run_attendees_import)
    add_cart_commands(commands)
    add_webhook_commands(commands)


def add_cart_commands(commands: Any) -> None:
    cart = commands.add_parser("cart", help="create checkout carts")
    actions = cart.add_subparsers(dest="cart_command", required=True)
    create = actions.add_parser(
        "create",
        help="create a checkout cart (--file cart.json, or flags for one item); prints the payment URL",
        description=(
            "Checks the spec's rules first (orderId, postbackUrl, items with productId, description and "
            "quantity, BRL only, products of this account). An orderId is sent once: a rerun prints the "
            "payment URL of the cart created before, and a cart whose answer was lost is not sent again "
            "until you have checked the platform and pass --resend."
        ),
    )
    create.add_argument("--file", type=Path, help="JSON file with the Cart request of the API spec")
    create.add_argument("--order-id", help="orderId (with the flags for one item)")
    create.add_argument("--postback-url", help="postbackUrl: the webhook URL the platform calls")
    create.add_argument("--return-url", help="returnUrl: where the buyer goes after paying")
    create.add_argument("--product", help="productId of the one item")
    create.add_argument("--description", help="description shown to the buyer")
    create.add_argument("--quantity", type=int, default=1)
    create.add_argument("--price", type=float, help="unit price (default: the product's price)")
    create.add_argument("--currency", default="BRL", help="only BRL is accepted by the platform")
    create.add_argument("--installments", type=int)
    create.add_argument("--customer-email")
    create.add_argument("--customer-name")
    create.add_argument("--resend", action="store_true", help="send even if this orderId was sent before")
    create.set_defaults(run=run_cart_create)


def run_cart_create(options: argparse.Namespace) -> int:
    from pipelines.commands.attendees_import import client_from_config
    from pipelines.commands.carts import cart_from_flags, create_cart, read_cart_file

    if options.file is not None:
        body = read_cart_file(options.file)
    elif options.order_id and options.product:
        body = cart_from_flags(options)
    else:
        raise ConfigurationError(
            "give --file cart.json, or --order-id, --postback-url, --product, --description"
        )
    with client_from_config() as client:
        return create_cart(client, body, resend=options.resend)


def run_attendees_import(options: argparse.Namespace) -> int:
    from pipelines.commands.attendee_rows import read_csv, read_query
    from pipelines.commands.attendees_import import run_import

    check_destination_name(options.destination)
    if options.file is not None:
        if not options.file.is_file():
            raise ConfigurationError(f"{options.file} is not a file")
        rows = read_csv(options.file)
        default_results = options.file.with_name(options.file.stem + ".results.csv")
    else:
        rows = read_query(options.query, options.destination, options.dataset)
        default_results = Path("attendee-import.results.csv")
    if not rows:
        raise ConfigurationError("the input has no rows")
    return run_import(
        rows,
        options.event,
        options.ticket,
        use_stock=options.use_stock,
        dry_run=options.dry_run,
        results=options.results or default_results,
        destination=options.destination,
        dataset=options.dataset,
    )
