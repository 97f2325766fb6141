"""Checkout carts (endpoint 2): validation and the 201 response; created carts are kept in memory (the
sandbox lists them at `/sandbox/carts`: the API has no read of carts)."""

from __future__ import annotations

from typing import Any

from .api import Record, WorldError
from .products import Catalog
from .rng import Rng, entity_key, record_key


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://")) and len(value) > 8


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def validate(body: Record, catalog: Catalog) -> list[dict[str, str]]:
    """Every problem with a cart request, as `details` entries (empty when the body is valid)."""
    if not isinstance(body, dict):
        return [{"field": "", "message": "body must be a JSON object"}]
    details = []
    if not isinstance(body.get("orderId"), str) or not body["orderId"]:
        details.append({"field": "orderId", "message": "required"})
    if not _is_url(body.get("postbackUrl")):
        details.append({"field": "postbackUrl", "message": "required URL"})
    if "returnUrl" in body and body["returnUrl"] is not None and not _is_url(body["returnUrl"]):
        details.append({"field": "returnUrl", "message": "must be a URL"})
    for name in ("installments", "shippingValue"):
        if body.get(name) is not None and not _number(body[name]):
            details.append({"field": name, "message": "must be a number"})
    items = body.get("items") or []
    if not isinstance(items, list):
        return [*details, {"field": "items", "message": "must be an array"}]
    for n, item in enumerate(items):
        where = f"items[{n}]"
        if not isinstance(item, dict):
            details.append({"field": where, "message": "must be an object"})
            continue
        pid = item.get("productId")
        if not isinstance(pid, str) or not pid:
            details.append({"field": f"{where}.productId", "message": "required"})
        elif pid not in catalog.by_id:
            # every known product belongs to the world's single account, so "one account" reduces to this
            details.append({"field": f"{where}.productId", "message": "product not found in this account"})
        if not isinstance(item.get("description"), str) or not item["description"]:
            details.append({"field": f"{where}.description", "message": "required"})
        qty = item.get("quantity")
        if not isinstance(qty, int | float) or isinstance(qty, bool) or qty <= 0:
            details.append({"field": f"{where}.quantity", "message": "required positive number"})
        price = item.get("price")
        if price is not None:
            if not isinstance(price, dict):
                details.append({"field": f"{where}.price", "message": "must be an object"})
            else:
                if price.get("currency", "BRL") != "BRL":
                    details.append({"field": f"{where}.price.currency", "message": "only BRL is accepted"})
                if price.get("value") is not None and (not _number(price["value"]) or price["value"] < 0):
                    details.append({"field": f"{where}.price.value", "message": "must be a number >= 0"})
    return details


class Carts:
    def __init__(self, seed: int, catalog: Catalog):
        self.catalog = catalog
        self.key = entity_key(seed, "cart")
        self.count = 0
        self.created: list[Record] = []

    def create(self, body: Record) -> Record:
        details = validate(body, self.catalog)
        if details:
            raise WorldError(422, "validation_error", "invalid cart", details)
        rng = Rng(record_key(self.key, self.count))
        self.count += 1
        key = rng.token(24, "abcdef0123456789")
        cart = {
            "id": str(800_000_000 + self.count),
            "key": key,
            "orderId": body["orderId"],
            "paymentUrl": f"https://pay.platform.example/cart/{key}",
            "postbackUrl": body["postbackUrl"],
            "returnUrl": body.get("returnUrl"),
            "installments": body.get("installments") or 1,
            "items": [dict(item) for item in body.get("items") or []],
            "customer": body.get("customer"),
        }
        self.created.append(cart)
        return cart
