"""Store operations: sales, subscriptions, products with their campaigns and partners, affiliations
(spec 4.5, 4.8, 4.11 to 4.13, 4.15, 4.16)."""

from __future__ import annotations

import re
from typing import Any, Literal

from sandbox.errors import validation_error
from sandbox.operation import Call, OperationDef, envelope
from sandbox.world.api import World

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


OPERATIONS: list[OperationDef] = [
    OperationDef("sale_details", "GET", "/store/v1/sales/{id}", ("store_sales_read",), sale_details),
    OperationDef(
        "list_affiliations", "GET", "/store/v1/affiliates", ("store_affiliates_read",), list_affiliations
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
]
