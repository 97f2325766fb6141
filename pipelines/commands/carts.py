"""`platform-sync cart create`: a checkout cart from a JSON file (the spec's Cart request) or from flags
for one item; prints the payment URL.

Before sending, the spec's rules are checked: `orderId` and `postbackUrl` required, every item with
`productId`, `description` and a positive `quantity`, prices in BRL only, and every product one of this
account's (read from the product list: a cart holds products of one account).

A POST is never sent twice blindly. The ledger `.dlt/carts.jsonl` (fsynced) records each orderId's
intent before the POST and its outcome after. The API has no way to look a cart up, so when an answer is
lost (timeout, dropped connection, 5xx) the cart may exist: the command says so, and a rerun with that
orderId refuses to send until the user has checked and passes `--resend`. A cart created before is not
sent again: its payment URL is printed from the ledger.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.sync.lock import hold
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import (
    ApiError,
    AuthenticationError,
    ConfigurationError,
    MalformedResponseError,
    PermissionDeniedError,
    PlatformError,
    ServerError,
    TransportError,
)

LEDGER = Path(".dlt") / "carts.jsonl"
URL = re.compile(r"^https?://[^\s/]+\S*$")


def cart_problems(body: Any) -> list[str]:
    """What breaks the spec's rules in a cart request (empty when it may be sent)."""
    if not isinstance(body, dict):
        return ["the cart must be a JSON object"]
    problems = []
    if not isinstance(body.get("orderId"), str) or not body["orderId"].strip():
        problems.append("orderId is required")
    if not isinstance(body.get("postbackUrl"), str) or not URL.match(body["postbackUrl"]):
        problems.append("postbackUrl is required and must be an http(s) URL")
    if body.get("returnUrl") is not None and not URL.match(str(body["returnUrl"])):
        problems.append("returnUrl must be an http(s) URL")
    for name in ("installments", "shippingValue"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            problems.append(f"{name} must be a number >= 0")
    items = body.get("items")
    if not isinstance(items, list) or not items:
        return [*problems, "items must be a non-empty list"]
    for n, item in enumerate(items):
        problems += [f"items[{n}].{p}" for p in item_problems(item)]
    return problems


def item_problems(item: Any) -> list[str]:
    if not isinstance(item, dict):
        return ["must be an object"]
    problems = [
        f"{name} is required"
        for name in ("productId", "description")
        if not isinstance(item.get(name), str) or not item[name].strip()
    ]
    quantity = item.get("quantity")
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
        problems.append("quantity is required, a whole number >= 1")
    price = item.get("price")
    if price is not None:
        if not isinstance(price, dict):
            problems.append("price must be an object {value, currency}")
        else:
            if price.get("currency", "BRL") != "BRL":
                problems.append(f"price.currency {price.get('currency')!r}: only BRL is accepted")
            value = price.get("value")
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                problems.append("price.value must be a number >= 0")
    return problems


def foreign_products(client: PlatformClient, body: Mapping[str, Any]) -> list[str]:
    """Item product ids that are not products of this token's account (a cart holds one account's)."""
    own = {str(item.get("id")) for page in client.paginate("list_products") for item in page.items}
    return sorted({str(item["productId"]) for item in body["items"]} - own)


class Ledger:
    """Per orderId: `intent` before the POST, then `created` (with the answer) or `failed` (not created)."""

    def __init__(self, path: Path = LEDGER) -> None:
        self.path = path
        self.last: dict[str, dict[str, Any]] = {}
        if path.exists():
            for text in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(text)
                except ValueError:
                    continue
                self.last[entry["orderId"]] = entry

    def write(self, order_id: str, step: str, **details: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"orderId": order_id, "step": step, "at": datetime.now(UTC).isoformat(), **details}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.last[order_id] = entry


def in_doubt_message(order_id: str) -> str:
    return (
        f"the cart with orderId {order_id} may have been created: its answer was lost. The API cannot "
        "look carts up: check the platform (its checkout or sales for this orderId) and the postbackUrl's "
        "deliveries; send it again only if it is not there, with --resend (or use a new orderId)."
    )


def create_cart(
    client: PlatformClient, body: dict[str, Any], *, resend: bool, ledger_path: Path = LEDGER
) -> int:
    """Check, send once, print the payment URL. Exit 0 created (or created before), 2 refused before
    sending, 1 failed or in doubt."""
    problems = cart_problems(body)
    if problems:
        for problem in problems:
            print(f"cart: {problem}", file=sys.stderr)
        return 2
    order_id = body["orderId"]
    with hold(ledger_path.with_suffix(".lock"), "write", "the cart ledger", "platform-sync cart create"):
        ledger = Ledger(ledger_path)
        before = ledger.last.get(order_id)
        if before and before["step"] == "created" and not resend:
            print(f"a cart with orderId {order_id} was created before (id {before['id']}): not sent again")
            print(before["paymentUrl"])
            return 0
        if before and before["step"] == "intent" and not resend:
            print(f"not sent: {in_doubt_message(order_id)}", file=sys.stderr)
            return 1
        foreign = foreign_products(client, body)
        if foreign:
            print(f"cart: products not of this account: {', '.join(foreign)}", file=sys.stderr)
            return 2
        ledger.write(order_id, "intent")
        try:
            answer = client.request("create_cart", json=body)
        except (TransportError, ServerError, MalformedResponseError) as exc:
            # Connection refused is retried by the client itself (never sent); these may have gone through.
            print(f"error: {exc}\n{in_doubt_message(order_id)}", file=sys.stderr)
            return 1
        except (AuthenticationError, PermissionDeniedError) as exc:
            ledger.write(order_id, "failed", status=exc.status)
            print(f"error: {exc} (the cart needs the scope checkout_cart_write)", file=sys.stderr)
            return 1
        except (ApiError, PlatformError) as exc:  # refused (4xx): nothing was created
            ledger.write(order_id, "failed", status=getattr(exc, "status", None))
            print(f"error: the platform refused the cart: {exc}", file=sys.stderr)
            return 1
        ledger.write(order_id, "created", id=answer.get("id"), paymentUrl=answer.get("paymentUrl"))
    print(f"cart {answer.get('id')} created for orderId {order_id}; payment URL:")
    print(answer.get("paymentUrl"))
    return 0


def cart_from_flags(options: Any) -> dict[str, Any]:
    """A one-item cart from the command's flags."""
    item: dict[str, Any] = {
        "productId": options.product,
        "description": options.description,
        "quantity": options.quantity,
    }
    if options.price is not None:
        item["price"] = {"value": options.price, "currency": options.currency}
    body: dict[str, Any] = {"orderId": options.order_id, "postbackUrl": options.postback_url, "items": [item]}
    if options.return_url:
        body["returnUrl"] = options.return_url
    if options.installments:
        body["installments"] = options.installments
    if options.customer_email or options.customer_name:
        body["customer"] = {
            k: v for k, v in (("email", options.customer_email), ("name", options.customer_name)) if v
        }
    return body


def read_cart_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the cart file {path}: {exc}") from None
