"""Store and checkout operations (spec 4.2, 4.5, 4.8, 4.10 to 4.13, 4.15 to 4.17)."""

from __future__ import annotations

import re
from typing import Any, Literal

from sandbox.errors import validation_error
from sandbox.operation import Call, OperationDef, envelope
from sandbox.params import BodyCheck
from sandbox.world.api import World
from sandbox.world.finance import FISCAL_STATUSES

# Spec 4.12 lists a 422 for subscription details: the sandbox gives it to ids no record could have.
_SUBSCRIPTION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def sale_details(world: World, call: Call) -> Any:
    return world.sale(call.path["id"])


def list_affiliations(world: World, call: Call) -> Any:
    paging = call.query.paging()
    raw = call.query.string("productIds")
    call.query.done()
    # `productIds` is one string; a comma-separated list is the natural reading of "product ids".
    ids = [part.strip() for part in raw.split(",") if part.strip()] if raw else None
    return envelope(world.affiliations(ids or None), paging)


def list_fiscal_documents(world: World, call: Call) -> Any:
    q = call.query
    paging = q.paging()
    start, end = q.date("startDate", required=True), q.date("endDate", required=True)
    status = q.enum("status", FISCAL_STATUSES)
    filters = {name: q.string(param) for name, param in _FISCAL_FILTERS.items()}
    q.done()
    assert start is not None and end is not None
    if start > end:
        raise validation_error([{"field": "startDate", "message": "must not be after endDate"}])
    return envelope(world.fiscal_documents(start, end, status=status, **filters), paging)


_FISCAL_FILTERS = {
    "name": "name",
    "email": "email",
    "sale_id": "saleId",
    "product_id": "productId",
    "document_id": "documentId",
}


def list_subscriptions(world: World, call: Call) -> Any:
    q = call.query
    paging = q.paging()
    start, end = q.date("startDate"), q.date("endDate")
    filter_by = q.enum("filterBy", ("creation", "update"), default="creation")
    q.done()
    if start is not None and end is not None and start > end:
        raise validation_error([{"field": "startDate", "message": "must not be after endDate"}])
    by: Literal["creation", "update"] = "update" if filter_by == "update" else "creation"
    return envelope(world.subscriptions(start, end, by), paging)


def subscription_details(world: World, call: Call) -> Any:
    subscription_id = call.path["id"]
    if not _SUBSCRIPTION_ID.fullmatch(subscription_id):
        raise validation_error([{"field": "id", "message": "is not a valid subscription id"}])
    return world.subscription(subscription_id)


def list_products(world: World, call: Call) -> Any:
    paging = call.query.paging()
    call.query.done()
    return envelope(world.products(), paging)


def list_product_campaigns(world: World, call: Call) -> Any:
    return world.product_campaigns(call.path["id"])


def list_product_partners(world: World, call: Call) -> Any:
    return world.product_partners(call.path["id"])


def list_transfers(world: World, call: Call) -> Any:
    paging = call.query.paging()
    call.query.done()
    return envelope(world.transfers(), paging)


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
    OperationDef("sale_details", "GET", "/store/v1/sales/{id}", ("store_sales_read",), sale_details),
    OperationDef(
        "list_affiliations", "GET", "/store/v1/affiliates", ("store_affiliates_read",), list_affiliations
    ),
    OperationDef(
        "list_fiscal_documents",
        "GET",
        "/store/v1/financial/buyer/fiscal-documents",
        ("store_financial_read",),
        list_fiscal_documents,
    ),
    OperationDef(
        "list_subscriptions",
        "GET",
        "/store/v1/subscriptions",
        ("store_subscriptions_read",),
        list_subscriptions,
    ),
    OperationDef(
        "subscription_details",
        "GET",
        "/store/v1/subscriptions/{id}",
        ("store_subscriptions_read",),
        subscription_details,
    ),
    OperationDef("list_products", "GET", "/store/v1/products", ("store_products_read",), list_products),
    OperationDef(
        "list_product_campaigns",
        "GET",
        "/store/v1/products/{id}/campaigns",
        ("store_products_read",),
        list_product_campaigns,
    ),
    OperationDef(
        "list_product_partners",
        "GET",
        "/store/v1/products/{id}/partners",
        ("store_products_read",),
        list_product_partners,
    ),
    OperationDef(
        "list_transfers", "GET", "/store/v1/financial/transfers", ("store_financial_read",), list_transfers
    ),
]
