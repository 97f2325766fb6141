"""A tiny, fixed world for testing the HTTP layer without `sandbox.world.SyntheticWorld`.

Counts are chosen so paging arithmetic has remainders (37 products, 123 transfers, ...). Records are
small but keep the spec's key fields so filters can be checked from the outside.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sandbox.world.api import Record, WorldError

START = datetime(2026, 6, 1, tzinfo=UTC)
EVENT_ID = "6f1c2b1e-0000-4000-8000-000000000001"
TICKET_ID = "6f1c2b1e-0000-4000-8000-0000000000a1"
SOLD_OUT_TICKET_ID = "6f1c2b1e-0000-4000-8000-0000000000a2"
COMMUNITY_ID, EMPTY_COMMUNITY_ID, FOREIGN_COMMUNITY_ID = 11, 12, 99
ADD_ATTENDEE: dict[str, Any] = {  # a valid add-manually body for this world's event and ticket
    "eventId": EVENT_ID,
    "ticketId": TICKET_ID,
    "name": "Ana",
    "document": "12345678909",
    "documentType": "cpf",
    "email": "ana@example.com",
    "phone": "11999990000",
    "useStock": False,
}
COUNTS = {
    "products": 37,
    "transfers": 123,
    "subscriptions": 45,
    "fiscal": 64,
    "attendees": 57,
    "comments": 88,
}


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class ListListing:
    def __init__(self, records: Sequence[Record]):
        self.records = list(records)

    def __len__(self) -> int:
        return len(self.records)

    def page(self, offset: int, limit: int) -> list[Record]:
        return self.records[offset : offset + limit]


def _missing(what: str) -> WorldError:
    return WorldError(404, "not_found", f"{what} not found")


class FakeWorld:
    def __init__(self, seed: int = 1, scale: int = 200):
        self.clock = START
        self.seed, self.scale = seed, scale
        self.stock = {TICKET_ID: 1000, SOLD_OUT_TICKET_ID: 0}
        day = timedelta(days=1)
        self._products = [{"id": f"P{i:03d}", "name": f"Product {i}"} for i in range(COUNTS["products"])]
        self._transfers = [{"id": f"T{i:04d}", "status": "confirmed"} for i in range(COUNTS["transfers"])]
        self._subs = [
            {
                "id": f"S{i:03d}",
                "createdAt": iso(START - (60 - i) * day),
                "updatedAt": iso(START - (30 - i % 30) * day),
            }
            for i in range(COUNTS["subscriptions"])
        ]
        statuses = ("new", "processed", "approved", "canceled")
        self._fiscal = [
            {
                "document": {
                    "id": f"F{i:03d}",
                    "status": statuses[i % 4],
                    "emissionDate": iso(START - (64 - i) * day),
                },
                "client": {"email": f"buyer{i % 5}@example.com", "name": f"Buyer {i % 5}"},
                "sale": {"id": f"SALE{i:03d}"},
                "product": {"id": f"P{i % 3:03d}"},
            }
            for i in range(COUNTS["fiscal"])
        ]
        att_statuses = ("confirmed", "paid", "refunded")
        self._attendees = [
            {
                "id": f"6f1c2b1e-0000-4000-9000-{i:012d}",
                "name": f"Guest {i}",
                "status": att_statuses[i % 3],
                "ticketId": TICKET_ID if i % 2 else SOLD_OUT_TICKET_ID,
                "modifiedAt": iso(START - (57 - i) * timedelta(hours=1)),
            }
            for i in range(COUNTS["attendees"])
        ]
        com_statuses = ("approved", "rejected", "inModeration")
        self._comments = [
            {
                "id": i,
                "status": com_statuses[i % 3],
                "isFavorite": i % 2 == 0,
                "isAnswered": i % 3 == 0,
                "isRead": i % 4 == 0,
                "isFixed": i % 5 == 0,
                "lessonId": 100 + i % 4,
                "courseId": 1 + i % 2,
                "author": f"student{i % 6}@example.com",
            }
            for i in range(COUNTS["comments"])
        ]

    def advance(self, seconds: float) -> None:
        self.clock += timedelta(seconds=seconds)

    def catalog(self) -> dict[str, Any]:
        return {
            "clock": iso(self.clock),
            "events": [
                {"id": EVENT_ID, "title": "Fake event", "ticket_ids": [TICKET_ID, SOLD_OUT_TICKET_ID]}
            ],
            "communities": [
                {"id": COMMUNITY_ID, "name": "Fake"},
                {"id": EMPTY_COMMUNITY_ID, "name": "Quiet"},
            ],
            "schools": [{"team_slug": "team-a", "student_slugs": ["stu-1"], "delivery_ids": [7]}],
            "courses": [{"id": 1, "lesson_ids": [100, 102]}, {"id": 2, "lesson_ids": [101, 103]}],
            "products": [{"id": p["id"]} for p in self._products],
        }

    def _product(self, product_id: str) -> Record:
        for product in self._products:
            if product["id"] == product_id:
                return product
        raise _missing("product")

    def products(self) -> ListListing:
        return ListListing(self._products)

    def product_campaigns(self, product_id: str) -> list[Record]:
        self._product(product_id)
        return [{"id": f"{product_id}-C1", "title": "Campaign"}]

    def product_partners(self, product_id: str) -> list[Record]:
        self._product(product_id)
        return [{"id": f"{product_id}-X1", "name": "Partner"}]

    def affiliations(self, product_ids: Sequence[str] | None) -> ListListing:
        ids = list(product_ids) if product_ids else [p["id"] for p in self._products]
        for product_id in ids:
            self._product(product_id)
        return ListListing([{"id": f"A-{pid}-{k}", "product": {"id": pid}} for pid in ids for k in range(2)])

    def transfers(self) -> ListListing:
        return ListListing(self._transfers)

    def subscriptions(
        self, start: datetime | None, end: datetime | None, filter_by: Literal["creation", "update"]
    ) -> ListListing:
        key = "updatedAt" if filter_by == "update" else "createdAt"

        def inside(record: Record) -> bool:
            moment = datetime.fromisoformat(record[key])
            return (start is None or moment >= start) and (end is None or moment <= end)

        return ListListing(sorted((s for s in self._subs if inside(s)), key=lambda s: (s[key], s["id"])))

    def subscription(self, subscription_id: str) -> Record:
        for record in self._subs:
            if record["id"] == subscription_id:
                return record
        raise _missing("subscription")

    def sale(self, sale_id: str) -> Record:
        if sale_id.startswith("SALE"):
            return {"id": sale_id, "status": "paid"}
        raise _missing("sale")

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
    ) -> ListListing:
        def keep(r: Record) -> bool:
            moment = datetime.fromisoformat(r["document"]["emissionDate"])
            return (
                start <= moment <= end
                and status in (None, r["document"]["status"])
                and email in (None, r["client"]["email"])
                and name in (None, r["client"]["name"])
                and sale_id in (None, r["sale"]["id"])
                and product_id in (None, r["product"]["id"])
                and document_id in (None, r["document"]["id"])
            )

        return ListListing([r for r in self._fiscal if keep(r)])

    def create_cart(self, body: Record) -> Record:
        for item in body.get("items") or []:
            self._product(item["productId"]) if item["productId"].startswith("P") else None
            if not item["productId"].startswith("P"):
                raise WorldError(
                    422, "validation_error", "unknown product", [{"field": "items", "message": "x"}]
                )
        return {**body, "id": body["orderId"], "key": "k", "paymentUrl": "https://pay.example/k"}

    def event(self, event_id: str) -> Record:
        if event_id != EVENT_ID:
            raise _missing("event")
        return {"id": EVENT_ID, "title": "Fake event"}

    def attendees(
        self,
        event_id: str,
        modified_gte: datetime | None = None,
        modified_lte: datetime | None = None,
        status: str | None = None,
        search: str | None = None,
        order: Literal["asc", "desc"] = "asc",
        ticket_id: str | None = None,
    ) -> ListListing:
        self.event(event_id)

        def keep(r: Record) -> bool:
            moment = datetime.fromisoformat(r["modifiedAt"])
            return (
                (modified_gte is None or moment >= modified_gte)
                and (modified_lte is None or moment <= modified_lte)
                and status in (None, r["status"])
                and ticket_id in (None, r["ticketId"])
                and (search is None or search.lower() in r["name"].lower())
            )

        records = sorted((r for r in self._attendees if keep(r)), key=lambda r: (r["modifiedAt"], r["id"]))
        return ListListing(records[::-1] if order == "desc" else records)

    def add_attendee(self, body: Record) -> Record:
        self.event(body["eventId"])
        if body["ticketId"] not in self.stock:
            raise _missing("ticket")
        if body["document"] == "00000000000":
            raise WorldError(422, "validation_error", "invalid document")
        if body.get("useStock") and self.stock[body["ticketId"]] <= 0:
            raise WorldError(422, "validation_error", "insufficient stock")
        return {
            "id": "6f1c2b1e-0000-4000-a000-000000000001",
            "status": "presence_confirmed",
            "manuallyCreated": True,
        }

    def enrollments(self, team_slug: str, student_slug: str) -> ListListing:
        if (team_slug, student_slug) != ("team-a", "stu-1"):
            raise _missing("student")
        return ListListing([{"course": {"name": f"Course {i}"}, "progress": i * 10} for i in range(11)])

    def delivery(self, team_slug: str, delivery_id: int) -> Record:
        if (team_slug, delivery_id) != ("team-a", 7):
            raise _missing("delivery")
        return {"id": 7, "name": "Delivery"}

    def _community(self, community_id: int) -> None:
        if community_id not in (COMMUNITY_ID, EMPTY_COMMUNITY_ID):
            raise WorldError(403, "forbidden", "community does not belong to the user")

    def top_commented_posts(self, community_id: int, days: int) -> list[Record]:
        self._community(community_id)
        if community_id == EMPTY_COMMUNITY_ID:
            raise _missing("posts with comments")
        return [{"id": i, "totalComments": 10 - i, "days": days} for i in range(7)]  # more than 5 on purpose

    def community_commenters(self, community_id: int, days: int) -> ListListing:
        self._community(community_id)
        return ListListing([{"id": i, "days": days} for i in range(min(days, 25))])

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
    ) -> ListListing:
        def keep(r: Record) -> bool:
            return (
                course_id in (None, r["courseId"])
                and lesson_id in (None, r["lessonId"])
                and status in (None, r["status"])
                and favorite in (None, r["isFavorite"])
                and answered in (None, r["isAnswered"])
                and read in (None, r["isRead"])
                and fixed in (None, r["isFixed"])
                and email in (None, r["author"])
            )

        return ListListing([r for r in self._comments if keep(r)])

    def webhook_origins(self) -> list[Record]:
        return [{"id": "o1", "name": "Store", "prefix": "store", "events": []}]
