"""Checkout operations: create a cart (spec 4.2)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef
from sandbox.params import BodyCheck
from sandbox.world.api import World


def create_cart(world: World, call: Call) -> Any:
    assert call.body is not None
    check_cart(call.body)
    return world.create_cart(call.body)


def check_cart(body: dict[str, Any]) -> None:
    """Types and required fields of the Cart request (spec 2.2); the world checks the meaning."""
    check = BodyCheck()
    for name in ("orderId", "postbackUrl"):
        check.field(body, name, "string", required=True)
    check.field(body, "returnUrl", "string")
    for name in ("postbackUrl", "returnUrl"):
        url = body.get(name)
        if isinstance(url, str) and not url.startswith(("http://", "https://")):
            check.fail(name, "must be an http(s) URL")
    check.field(body, "installments", "integer")
    check.field(body, "shippingValue", "number")
    for index, item in enumerate(check.field(body, "items", "array") or []):
        prefix = f"items[{index}]."
        if not isinstance(item, dict):
            check.fail(prefix[:-1], "must be an object")
            continue
        check.field(item, "productId", "string", required=True, prefix=prefix)
        check.field(item, "description", "string", required=True, prefix=prefix)
        check.field(item, "quantity", "integer", required=True, prefix=prefix)
        price = check.field(item, "price", "object", prefix=prefix)
        if price is not None:
            check.field(price, "value", "number", prefix=prefix + "price.")
            currency = check.field(price, "currency", "string", prefix=prefix + "price.")
            if currency is not None and currency != "BRL":
                check.fail(prefix + "price.currency", "only BRL is accepted")
    customer = check.field(body, "customer", "object")
    if customer is not None:
        for name in ("email", "name", "cellphone", "document"):
            check.field(customer, name, "string", prefix="customer.")
        address = check.field(customer, "address", "object", prefix="customer.")
        if address is not None:
            for name in ("street", "number", "neighborhood", "complement", "postalCode", "state"):
                check.field(address, name, "string", prefix="customer.address.")
    check.done()


OPERATIONS: list[OperationDef] = [
    OperationDef(
        "create_cart", "POST", "/checkout/v1/cart", ("checkout_cart_write",), create_cart, 201, True
    ),
]
