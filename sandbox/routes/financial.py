"""Store financial operations: buyer fiscal documents and transfers (spec 4.10, 4.17)."""

from __future__ import annotations

from typing import Any

from sandbox.errors import validation_error
from sandbox.operation import Call, OperationDef, envelope
from sandbox.world.api import World
from sandbox.world.finance import FISCAL_STATUSES


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


def list_transfers(world: World, call: Call) -> Any:
    paging = call.query.paging()
    call.query.done()
    return envelope(world.transfers(), paging)


OPERATIONS: list[OperationDef] = [
    OperationDef(
        "list_fiscal_documents",
        "GET",
        "/store/v1/financial/buyer/fiscal-documents",
        ("store_financial_read",),
        list_fiscal_documents,
    ),
    OperationDef(
        "list_transfers", "GET", "/store/v1/financial/transfers", ("store_financial_read",), list_transfers
    ),
]
