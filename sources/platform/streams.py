"""One declaration per resource: operation, model, key and how it stays up to date.

Everything a resource needs to be declared to dlt lives here; `readers.py` holds the few ways of
reading that these declarations share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from sources.platform import models
from sources.platform.models.columnar import Layout, column_name, columnar_layout
from sources.platform.models.hints import unwrap_optional

WriteDisposition = Literal["merge", "replace", "append"]


@dataclass(frozen=True)
class Stream:
    name: str
    operation: str
    model: type[BaseModel]
    primary_key: tuple[str, ...]
    write_disposition: WriteDisposition
    extra_columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    # Read whole each time (the API has no update filter): on every run while its last scan was cheap,
    # else every `rescan_hours` (`rescan.py`).
    full_scan: bool = False
    # One request per parent (product, event, student, delivery, community): never cheap enough to be
    # read on every run; it waits for `rescan_hours`.
    fans_out: bool = False
    # Of two rows of one record in one load (a list that moved while it was read, a record changed
    # between two windows), the one with the highest value here is loaded; see `dedup_sort_column`.
    newest_by: str | None = None

    def columnar_layout(self) -> Layout | None:
        """How a page of this stream's rows becomes an Arrow table, if it can (`models/columnar.py`)."""
        return columnar_layout(self.model, self.extra_columns, self.primary_key)

    def dedup_sort_column(self) -> str:
        """The column of dlt's `dedup_sort` hint of a merged table: `newest_by`, else the first key column.

        Without the hint, dlt deduplicates the staged rows with `ROW_NUMBER() OVER (PARTITION BY key
        ORDER BY (SELECT NULL))`, which DuckDB runs about ten times slower than the same window ordered
        by a column (33 s against 3 s for 362k fiscal documents in bench/, and beyond its memory
        limit). Ordered by the key itself, the pick among equal keys stays arbitrary, as dlt's is.
        """
        return self.newest_by or self.primary_key[0]


TEXT_KEY = {"data_type": "text", "nullable": False}
BIGINT_KEY = {"data_type": "bigint", "nullable": False}
SNAPSHOT_COLUMNS = {
    "community_id": BIGINT_KEY,
    "days": BIGINT_KEY,
    "snapshot_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
}

STREAMS: dict[str, Stream] = {
    stream.name: stream
    for stream in (
        Stream(
            "products",
            "list_products",
            models.Product,
            ("id",),
            "merge",
            description="Products, read whole (every run while cheap), merged on id.",
            full_scan=True,
            newest_by="updated_at",
        ),
        Stream(
            "product_campaigns",
            "list_product_campaigns",
            models.Campaign,
            ("product_id", "id"),
            "replace",
            {"product_id": TEXT_KEY},
            "Campaigns of every product, a complete snapshot every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "product_partners",
            "list_product_partners",
            models.Partner,
            ("product_id", "id"),
            "replace",
            {"product_id": TEXT_KEY},
            "Partners of every product, a complete snapshot every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "affiliations",
            "list_affiliations",
            models.Affiliation,
            ("id",),
            "merge",
            description="Affiliations, read whole (every run while cheap), merged on id.",
            full_scan=True,
            newest_by="updated_at",
        ),
        Stream(
            "transfers",
            "list_transfers",
            models.Transfer,
            ("id",),
            "merge",
            description="Transfers, read whole (every run while cheap; statuses change), merged on id.",
            full_scan=True,
        ),
        Stream(
            "subscriptions",
            "list_subscriptions",
            models.Subscription,
            ("id",),
            "merge",
            description="Subscriptions changed since the last run (filterBy=update), merged on id.",
            newest_by="updated_at",
        ),
        Stream(
            "sales",
            "sale_details",
            models.Sale,
            ("id",),
            "merge",
            description="Sale details of every sale id discovered, new ones and those that can change.",
            newest_by="updated_at",
        ),
        Stream(
            "fiscal_documents",
            "list_fiscal_documents",
            models.FiscalDocument,
            ("document__id",),
            "merge",
            description="Buyer fiscal documents by emission-date windows, re-scanning a lag for changes.",
            newest_by="document__processing_date",
        ),
        Stream(
            "events",
            "event_details",
            models.TicketedEvent,
            ("id",),
            "merge",
            description="Configured ticketed events with their tickets and lots, every rescan_hours.",
            full_scan=True,
            fans_out=True,
            newest_by="modified_at",
        ),
        Stream(
            "event_attendees",
            "list_attendees",
            models.Attendee,
            ("id",),
            "merge",
            description="Attendees of each configured event, changed since that event's cursor.",
            newest_by="modified_at",
        ),
        Stream(
            "enrollments",
            "list_enrollments",
            models.Enrollment,
            ("team_slug", "student_slug", "course__name"),
            "merge",
            {"team_slug": TEXT_KEY, "student_slug": TEXT_KEY},
            "Enrollments of the configured students of each school, every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "deliveries",
            "delivery_details",
            models.Delivery,
            ("team_slug", "id"),
            "merge",
            {"team_slug": TEXT_KEY},
            "Configured deliveries of each school, every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "community_top_posts",
            "top_commented_posts",
            models.CommunityPost,
            ("community_id", "id", "snapshot_at"),
            "append",
            SNAPSHOT_COLUMNS,
            "The five most commented posts of each community, a snapshot appended every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "community_commenters",
            "list_community_commenters",
            models.CommunityMember,
            ("community_id", "id", "snapshot_at"),
            "append",
            SNAPSHOT_COLUMNS,
            "Members who commented in each community, a snapshot appended every rescan_hours.",
            full_scan=True,
            fans_out=True,
        ),
        Stream(
            "lesson_comments",
            "list_lesson_comments",
            models.LessonComment,
            ("id",),
            "merge",
            {"course_id": {"data_type": "bigint", "nullable": True}},
            description="Lesson comments, read whole (every run while cheap; flags change), merged on id.",
            full_scan=True,
        ),
        Stream(
            "webhook_origins",
            "list_webhook_origins",
            models.WebhookOrigin,
            ("id",),
            "replace",
            description="Webhook origins and their event kinds, replaced (every run while cheap).",
            full_scan=True,
        ),
    )
}


def record_key(stream: Stream, record: Any) -> tuple[str | None, str | None]:
    """The key of a record as the API sent it (its key fields joined by `/`), and why it cannot be
    keyed, if it cannot: a key field missing, null, empty or of another shape than a string or an
    integer. The key columns that config adds (`extra_columns`) are not the record's."""
    parts = []
    for path in _key_paths(stream.name):
        value: Any = record
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        dotted = ".".join(path)
        if value is None or value == "":
            return (None, f"no key: {dotted} is missing, null or empty")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return (None, f"the key {dotted} is a {type(value).__name__}, not a string or a number")
        if isinstance(value, float) and not value.is_integer():
            return (None, f"the key {dotted} is a fractional number")
        parts.append(str(int(value)) if isinstance(value, float) else str(value))
    return "/".join(parts), None


@cache
def _key_paths(name: str) -> tuple[tuple[str, ...], ...]:
    """The API paths of the stream's key columns that come from its records (dlt column names)."""
    stream = STREAMS[name]
    by_column = {column_name(path): path for path in _leaf_paths(stream.model)}
    return tuple(by_column[key] for key in stream.primary_key if key not in stream.extra_columns)


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, info in model.model_fields.items():
        tp, _ = unwrap_optional(info.annotation)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            paths += _leaf_paths(tp, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


# The resources read whole, at most once per `rescan_hours` (`rescan.py`).
FULL_SCANS: tuple[str, ...] = tuple(name for name, stream in STREAMS.items() if stream.full_scan)

# The resources whose rows reference sales, and where.
SALE_REFERENCES: dict[str, tuple[str, ...]] = {
    "subscriptions": ("firstInvoiceId",),
    "fiscal_documents": ("sale", "id"),
    "event_attendees": ("invoiceId",),
}
