"""One paged list of the API as the client walks it: its pages' bodies fetched one by one, and the walk
over them (`walking.walk_pages`). Decoding a body is the caller's: the client's own JSON pages
(`PagedList.json_page`, what `PlatformClient.paginate` yields), or the source's decoded pages
(`sources/platform/page_stage.py`). A body that does not decode is asked for again under the client's
retry policy, through `retry_malformed`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import httpx

from sources.platform_client.errors import MalformedResponseError
from sources.platform_client.operations import Operation
from sources.platform_client.outcomes import Failed, decode_json, malformed_failure
from sources.platform_client.paging import Page, PagedBody, parse_envelope

P = TypeVar("P", bound=PagedBody)


class Requests(Protocol):
    """What a paged list asks of its client (`client.PlatformClient`)."""

    items_per_page: int

    def fetch_body(
        self, operation: Operation, path: str, query: dict[str, Any], first_attempt: int
    ) -> tuple[httpx.Response, int]: ...
    def retry_or_raise(self, operation: Operation, outcome: Failed, attempt: int) -> None: ...
    def redact(self, text: str) -> str: ...
    def walk_pages(self, operation: Operation, fetch: Callable[[int], P], distinct: bool) -> Iterator[P]: ...
    def walk_tail_pages(
        self, operation: Operation, fetch: Callable[[int], P], first: int, known_last: int
    ) -> Iterator[P]: ...


@dataclass(frozen=True, slots=True)
class RawPage:
    """The body of one page as it came (a success status), and the try it came at."""

    content: bytes
    status_code: int
    number: int  # the page asked for
    attempts: int


class PagedList:
    """One paged list (an operation, its path and query) of a `PlatformClient` (`PlatformClient.paged`).

    `fetch(number)` gets page `number`'s body through the rate limiter and the HTTP retry policy, nothing
    more; whoever decodes it calls `retry_malformed` for a body that does not decode, which waits before
    the next try (`fetch(number, first_attempt=...)`) or raises, as the policy says; the tries of one
    page count together, as for any request. `walk(fetch)` walks the list with a function that fetches
    and decodes one page (`walking.walk_pages`); `json_page` is the client's own: the JSON envelope.
    """

    def __init__(self, client: Requests, operation: Operation, path: str, query: dict[str, Any]) -> None:
        self._client = client
        self.operation = operation
        self._path = path
        self._query = query

    @property
    def operation_name(self) -> str:
        return self.operation.name

    def fetch(self, number: int, first_attempt: int = 1) -> RawPage:
        """Page `number`'s body, as the server sent it with a success status."""
        client = self._client
        query = {**self._query, "page": number, "itemsPerPage": client.items_per_page}
        response, attempts = client.fetch_body(self.operation, self._path, query, first_attempt)
        return RawPage(response.content, response.status_code, number, attempts)

    def retry_malformed(self, error: MalformedResponseError, attempt: int) -> None:
        """A page's body fetched at try `attempt` did not decode: wait before the next try, or raise."""
        self._client.retry_or_raise(self.operation, malformed_failure(self.operation, error), attempt)

    def envelope(self, raw: RawPage) -> Page:
        """The page as the client decodes it: its JSON envelope (`MalformedResponseError` if it is not)."""
        document = decode_json(raw, self.operation.name, raw.number, self._client.redact)
        return parse_envelope(document, operation=self.operation.name, requested_page=raw.number)

    def json_page(self, number: int) -> Page:
        """Page `number` as JSON records, a body that does not decode asked for again per the policy."""
        attempt = 1
        while True:
            raw = self.fetch(number, attempt)
            try:
                return self.envelope(raw)
            except MalformedResponseError as error:
                self.retry_malformed(error, raw.attempts)
                attempt = raw.attempts + 1

    def walk(self, fetch: Callable[[int], P], distinct: bool = False) -> Iterator[P]:
        """The list's pages as `fetch(number)` gives them, fetched ahead and walked again while the list
        moves (`walking.walk_pages`); `distinct`: each record at most once."""
        return self._client.walk_pages(self.operation, fetch, distinct)

    def walk_tail(self, fetch: Callable[[int], P], first: int, known_last: int) -> Iterator[P]:
        """The last pages of the list, sent oldest first, the last page first, from the page numbered
        `known_last` on (`walking.walk_tail`); `first`: the server's first page number."""
        return self._client.walk_tail_pages(self.operation, fetch, first, known_last)
