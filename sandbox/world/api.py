"""The interface between the sandbox's HTTP layer (`sandbox/app.py`) and its world (`sandbox/world/`).

The world is pure data: deterministic from (seed, scale) and the sequence of `advance` calls, with no
HTTP knowledge. Every record is a plain dict shaped exactly as the spec's part 2 (camelCase keys,
datetimes as ISO 8601 strings). The HTTP layer validates parameters, checks auth, pages and
serialises; the world filters and builds records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

Record = dict[str, Any]


class WorldError(Exception):
    """A request the world refuses; the HTTP layer answers `status` with the error body."""

    def __init__(self, status: int, code: str, message: str, details: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []


class Listing(Protocol):
    """A filtered, ordered result: its length is `totalItems`, a slice is one page (built on demand)."""

    def __len__(self) -> int: ...

    def page(self, offset: int, limit: int) -> list[Record]: ...


class World(Protocol):
    clock: datetime  # aware UTC

    def advance(self, seconds: float) -> None: ...
    def catalog(self) -> dict[str, Any]: ...

    # store
    def products(self) -> Listing: ...
    def product_campaigns(self, product_id: str) -> list[Record]: ...  # WorldError 404 if unknown
    def product_partners(self, product_id: str) -> list[Record]: ...  # WorldError 404 if unknown
    def affiliations(self, product_ids: Sequence[str] | None) -> Listing: ...  # 404 on an unknown id
    def transfers(self) -> Listing: ...
    def subscriptions(
        self, start: datetime | None, end: datetime | None, filter_by: Literal["creation", "update"]
    ) -> Listing: ...
    def subscription(self, subscription_id: str) -> Record: ...  # 404
    def sale(self, sale_id: str) -> Record: ...  # 404
    def fiscal_documents(
        self,
        start: datetime,
        end: datetime,
        status: str | None = None,
        name: str | None = None,
        email: str | None = None,
        sale_id: str | None = None,
        product_id: str | None = None,
        document_id: str | None = None,
    ) -> Listing: ...
    def create_cart(self, body: Record) -> Record: ...  # 422 on invalid body

    # events
    def event(self, event_id: str) -> Record: ...  # 404
    def attendees(
        self,
        event_id: str,
        modified_gte: datetime | None = None,
        modified_lte: datetime | None = None,
        status: str | None = None,
        search: str | None = None,
        order: Literal["asc", "desc"] = "asc",
        ticket_id: str | None = None,
    ) -> Listing: ...  # 404 unknown event
    def add_attendee(self, body: Record) -> Record: ...  # 404 event/ticket, 422 stock/document

    # school, community, course, webhooks
    def enrollments(self, team_slug: str, student_slug: str) -> Listing: ...  # 404 unknown school/student
    def delivery(self, team_slug: str, delivery_id: int) -> Record: ...  # 404
    def top_commented_posts(self, community_id: int, days: int) -> list[Record]: ...  # 403 foreign, 404 none
    def community_commenters(self, community_id: int, days: int) -> Listing: ...  # 403 foreign community
    def lesson_comments(
        self,
        course_id: int | None = None,
        lesson_id: int | None = None,
        status: str | None = None,
        favorite: bool | None = None,
        answered: bool | None = None,
        read: bool | None = None,
        fixed: bool | None = None,
        email: str | None = None,
    ) -> Listing: ...
    def webhook_origins(self) -> list[Record]: ...
