"""What an API operation of the sandbox is: its definition (`OperationDef`), what its handler sees of a
request (`Call`), and the paged envelope of spec part 1 that the listing handlers answer with.

Below both the app (`app.py`, which serves every definition through one gate) and the routes of each
area (`routes/`), which define them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.params import Paging, Query
from sandbox.world.api import Listing, World


@dataclass(frozen=True)
class Call:
    """What a handler sees of a request: path parameters, the query and the JSON body (if any)."""

    path: Mapping[str, str]
    query: Query
    body: dict[str, Any] | None


Handler = Callable[[World, Call], Any]


@dataclass(frozen=True)
class OperationDef:
    name: str
    method: str
    path: str
    scopes: tuple[str, ...]
    handler: Handler
    status: int = 200
    has_body: bool = False


def envelope(listing: Listing, paging: Paging) -> dict[str, Any]:
    """The paged envelope of spec part 1; a page past the end has no items but the true totals."""
    total = len(listing)
    offset = paging.offset
    items = listing.page(offset, paging.items_per_page) if offset < total else []
    return {
        "pages": math.ceil(total / paging.items_per_page),
        "page": paging.page,
        "itemsPerPage": paging.items_per_page,
        "totalItems": total,
        "items": items,
    }
