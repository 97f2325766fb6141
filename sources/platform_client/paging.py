"""The paged envelope (spec conventions 2) and the walk over pages (contracts part 1).

The walk asks for page 1 and then follows the server: its `page` numbers, its `pages` count and its
`itemsPerPage`. A first answer numbered 0 means the server counts from 0, so the walk continues with 1, 2, ...
up to `pages - 1`. A server that counts from 0 but answered our `page=1` with its *second* page is caught
at the end: the page numbered `pages` comes back empty although `pages` pages and some items were announced,
which a 1-based server cannot say; the walk then fetches page 0, once. An empty page ends the walk. Pages
that do not advance (same number again, or the same items under a new number) raise `PagingLoopError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, Self

from sources.platform_client.errors import MalformedResponseError, PagingLoopError

ENVELOPE_NUMBERS = ("page", "pages", "itemsPerPage", "totalItems")


class PagedBody(Protocol):
    """What a walk (`PageWalk`, `walking.walk_pages`) needs of a page: its envelope's numbers, how many
    records it holds, whether it repeats another, and its records' keys. `Page` is one; a caller that
    decodes pages its own way (the source: `sources/platform/fastpath/page_decoding.DecodedPage`) gives
    its own."""

    @property
    def page(self) -> int: ...
    @property
    def pages(self) -> int: ...
    @property
    def total_items(self) -> int: ...
    @property
    def items_per_page(self) -> int: ...
    def record_count(self) -> int: ...
    def repeats(self, other: Any) -> bool: ...
    def record_keys(self) -> list[Any] | None: ...
    def unseen(self, yielded: set[int]) -> Self: ...


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a paged list, its records as decoded JSON objects; `items_per_page` is the size the
    server used, not the one asked for."""

    items: list[dict[str, Any]]
    page: int
    pages: int
    total_items: int
    items_per_page: int

    def record_count(self) -> int:
        """How many records of the list this page holds."""
        return len(self.items)

    def repeats(self, other: Any) -> bool:
        """Whether this page holds the same records as `other`. Lists are compared as they are: two
        different pages differ in their first item, so this costs one comparison per page (a hash of
        every page's items was a fiftieth of the extract's time)."""
        return isinstance(other, Page) and self.items == other.items

    def record_keys(self) -> list[Any] | None:
        """The records' `id`s (a fiscal document's `document.id`), or None when they carry none."""
        return record_keys(self.items)

    def unseen(self, yielded: set[int]) -> Page:
        """The page without the records whose key's hash is in `yielded` (records without keys are all
        kept); the keys of those kept join `yielded`."""
        kept = unseen_items(self.items, yielded)
        return self if len(kept) == len(self.items) else replace(self, items=kept)


def record_keys(items: list[dict[str, Any]]) -> list[Any] | None:
    """The records' `id`s (a fiscal document's `document.id`), or None when the items carry none."""
    keys = []
    for item in items:
        key = item.get("id")
        if key is None and isinstance(item.get("document"), dict):
            key = item["document"].get("id")
        if key is None or isinstance(key, dict | list):
            return None
        keys.append(key)
    return keys


def unseen_items(items: list[dict[str, Any]], yielded: set[int]) -> list[dict[str, Any]]:
    """The records not yielded yet by their key (`Page.unseen`); all of them when they carry no keys."""
    keys = record_keys(items)
    if keys is None:
        return items
    kept = []
    for item, key in zip(items, keys, strict=True):
        if hash(key) not in yielded:
            yielded.add(hash(key))
            kept.append(item)
    return kept


UNKNOWN = -1  # an envelope number the server left out or sent unusable (`parse_envelope`)


def _as_count(value: object) -> int | None:
    # JSON has only "number": 3.0 is a fine page count, 3.5 or true are not; "10" is read as the records'
    # numbers are (a server that writes its numbers as text writes them so everywhere).
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def parse_envelope(data: object, *, operation: str, requested_page: int) -> Page:
    """Read a paged envelope; `MalformedResponseError` (naming operation and page) if it is not one.

    Tolerant of its numbers as of the records' (docs/contracts.md part 1, "the envelope"): a number sent
    as text ("10") is read; unknown keys (a `nextPage` link) are passed; a `page` missing or unusable is
    the page asked for; `pages`, `totalItems` or `itemsPerPage` missing or unusable are `UNKNOWN`, and the
    walk then goes on while pages come full (`PageWalk`); a `pages` smaller than `totalItems` needs is
    raised to it. Only a body that is no object, or whose `items` is no list of objects, is malformed."""

    def malformed(problem: str) -> MalformedResponseError:
        return MalformedResponseError(
            f"{operation}: page {requested_page} is not a paged envelope: {problem}",
            operation=operation,
            page=requested_page,
        )

    if not isinstance(data, dict):
        raise malformed(f"expected a JSON object, got {type(data).__name__}")
    if "items" not in data:
        raise malformed("missing items")
    items = data["items"]
    if not isinstance(items, list):
        raise malformed(f"items is a {type(items).__name__}, not a list")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise malformed(f"items[{index}] is a {type(item).__name__}, not an object")
    numbers = {key: _as_count(data.get(key)) for key in ENVELOPE_NUMBERS}
    number = numbers["page"]
    pages, total, size = (
        UNKNOWN if (count := numbers[key]) is None else count
        for key in ("pages", "totalItems", "itemsPerPage")
    )
    if pages != UNKNOWN and total != UNKNOWN and size > 0 and -(-total // size) > pages:
        pages = -(-total // size)
    return Page(
        items=items,
        page=requested_page if number is None else number,
        pages=pages,
        total_items=total,
        items_per_page=size,
    )


class PageWalk:
    """Decides which page to ask for next, and checks that each answer advances.

    Use: `number = walk.first`; after each answer, `walk.accept(page)` says whether to hand the page to
    the caller, then `number = walk.next()` until it returns None.
    """

    first = 1

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self._requested = self.first
        self._zero_based: bool | None = None
        self._last_number: int | None = None
        self._last_page: PagedBody | None = None
        self._next: int | None = None
        self._probed_zero = False
        self._last_index: int | None = None  # the last page number the server announced
        self._page_size: int | None = None  # the most records a page held, where no size was announced

    def _loop(self, problem: str) -> PagingLoopError:
        return PagingLoopError(
            f"{self.operation}: paging does not advance ({problem}); stopped to avoid a loop. "
            "The server's paging is inconsistent; report it with this message.",
            operation=self.operation,
            page=self._requested,
        )

    def accept(self, page: PagedBody) -> bool:
        """Record the answer to the last request; True if its items are new and should be yielded."""
        requested = self._requested
        self._next = None
        if self._probed_zero:
            # The answer to the page-0 probe: use it only if the server really numbers it 0.
            return page.page == 0 and bool(page.record_count())
        if self._zero_based is None:
            if page.page not in (0, 1):
                raise self._loop(f"asked for page 1, got page {page.page}")
            self._zero_based = page.page == 0
        elif page.page != requested:
            raise self._loop(f"asked for page {requested}, got page {page.page}")
        if self._last_number is not None and page.page <= self._last_number:
            raise self._loop(f"page {page.page} after page {self._last_number}")
        if page.record_count():
            if self._last_page is not None and page.repeats(self._last_page):
                raise self._loop(f"page {page.page} repeats the items of page {self._last_number}")
            self._last_page = page
        self._last_number = page.page
        if not page.record_count():
            if not self._zero_based and page.page >= 1 and page.page == page.pages and page.total_items > 0:
                # Page `pages` of a 1-based server is its last, never empty when it announces items: this
                # server counts from 0, and our first request skipped its page 0.
                self._probed_zero = True
                self._next = 0
            return False
        last = self._last_page_number(page)
        self._last_index = last
        if last is None or page.page < last:
            self._next = page.page + 1
        return True

    def _last_page_number(self, page: PagedBody) -> int | None:
        """The number of the list's last page as this envelope tells it, else as an earlier page of the
        walk told it; None when none did (`pages` and `totalItems` unknown) and the page came full: the
        walk asks for the next, and an empty or a short page ends it. A short page with nothing announced
        is the last."""
        pages = page.pages
        if pages == UNKNOWN and page.total_items != UNKNOWN and page.items_per_page > 0:
            pages = -(-page.total_items // page.items_per_page)
        if pages == UNKNOWN and self._last_index is not None:
            return self._last_index
        if pages == UNKNOWN:
            size = page.items_per_page if page.items_per_page > 0 else self._page_size
            self._page_size = max(self._page_size or 0, page.record_count())
            if size is not None and page.record_count() < size:
                return page.page
            return None
        return pages - 1 if self._zero_based else pages

    def next(self) -> int | None:
        """The page number to ask for next, or None when the walk is over."""
        if self._next is not None:
            self._requested = self._next
        return self._next

    def upcoming(self, count: int) -> list[int]:
        """Up to `count` page numbers the walk expects to ask for from the current request on, as far as
        the last page the server announced; none during the page-0 probe or before a first answer."""
        if self._probed_zero or self._next is None:
            return []
        if self._last_index is None:  # nothing announced: the next page only
            return [self._next]
        return list(range(self._next, min(self._last_index, self._next + count - 1) + 1))

    @property
    def zero_based(self) -> bool:
        """Whether the server numbers its pages from 0 (known after the first answer)."""
        return bool(self._zero_based)

    @property
    def probed_zero(self) -> bool:
        """Whether the walk had to fetch a missed page 0 (a server whose numbering is inconsistent)."""
        return self._probed_zero

    @property
    def zero_probe(self) -> bool:
        """Whether the current request is the page-0 probe (its envelope page must be 0)."""
        return self._probed_zero and self._requested == 0
