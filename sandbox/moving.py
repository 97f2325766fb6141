"""The `reorder=N` fault: a paged list that moves while it is walked (issue 26, contracts part 2).

A list ordered by update time changes under a walk when a record is updated between two page requests:
it moves to the end and every record after it moves one place up, so one record crosses back over the
page boundary the walk has passed (never read) and the moved one is read twice. Here, the first time a
walk of a listing (an operation with its path and query, the paging parameters aside) asks for a page
after the first, the first N records of the listing move to its end, and it stays so: every later page
of that listing is served from the moved order, until the fault spec is set again (which forgets the
moves). Records keep their content: a walk that does not notice the move loses one record per move
for good, which a clean reference sync of the same world shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sandbox.params import Query

PAGING = frozenset({"page", "itemsPerPage"})
ListingKey = tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


class MovingLists:
    """The listings moved so far under the current fault spec, and their pages in the moved order."""

    def __init__(self) -> None:
        self.moved: dict[ListingKey, int] = {}
        self._spec: object = None

    def serve(self, spec: Any, definition: Any, world: Any, call: Any, payload: Any) -> Any:
        """The page `payload` answers `call` with, after the moves of its listing (`spec.reorder`)."""
        if spec is not self._spec:  # a new fault spec starts with no list moved
            self._spec = spec
            self.moved.clear()
        if not (isinstance(payload, dict) and isinstance(payload.get("items"), list) and "pages" in payload):
            return payload
        page, size, total = payload["page"], payload["itemsPerPage"], payload["totalItems"]
        params = _params(call.query)
        key: ListingKey = (
            definition.name,
            tuple(sorted((name, str(value)) for name, value in call.path.items())),
            tuple(sorted((name, value) for name, value in params.items() if name not in PAGING)),
        )
        if page >= 2 and key not in self.moved:
            self.moved[key] = spec.reorder
        moves = min(self.moved.get(key, 0), total)
        if not moves or not size:
            return payload

        def original_page(number: int) -> list[Any]:
            query = Query({**params, "page": str(number), "itemsPerPage": str(size)})
            return list(definition.handler(world, type(call)(call.path, query, call.body))["items"])

        return {**payload, "items": rotated_page(original_page, page, size, total, moves)}


def newest_first(definition: Any, world: Any, call: Any, payload: Any) -> Any:
    """The `newest_first` fault: page `payload` answers of the listing served in reverse order."""
    if not (isinstance(payload, dict) and isinstance(payload.get("items"), list) and "pages" in payload):
        return payload
    page, size, total = payload["page"], payload["itemsPerPage"], payload["totalItems"]
    if not size or not total:
        return payload
    params = _params(call.query)
    cache: dict[int, list[Any]] = {}
    items = []
    for index in range((page - 1) * size, min(page * size, total)):
        source = total - 1 - index
        number = source // size + 1
        if number not in cache:
            query = Query({**params, "page": str(number), "itemsPerPage": str(size)})
            cache[number] = list(definition.handler(world, type(call)(call.path, query, call.body))["items"])
        items.append(cache[number][source % size])
    return {**payload, "items": items}


def _params(query: Query) -> dict[str, str]:
    raw: Mapping[str, str] = query._params
    return {key: raw[key] for key in raw}


def rotated_page(
    original_page: Callable[[int], list[Any]], page: int, size: int, total: int, moves: int
) -> list[Any]:
    """Page `page` (1-based) of the list whose first `moves` records moved to its end."""
    moves = min(moves, total)
    cache: dict[int, list[Any]] = {}
    items = []
    for index in range((page - 1) * size, min(page * size, total)):
        source = (index + moves) % total
        number = source // size + 1
        if number not in cache:
            cache[number] = original_page(number)
        items.append(cache[number][source % size])
    return items
