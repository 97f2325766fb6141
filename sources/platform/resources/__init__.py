"""The source's resources, by area of the API (spec part 4's paths): each area's modules are named by
the area (`<area>.py`, `<area>_*.py`) and declare its resources (`stream.Stream`) beside their readers.

| area | module | resources |
|---|---|---|
| store | `store.py` | products, product_campaigns, product_partners, affiliations, subscriptions |
| | `store_sales.py` | sales (sale details; the ids come through `store_sale_ids.py`) |
| | `store_renewals.py` | subscriptions due for a renewal, read again by id |
| financial | `financial.py` | transfers, fiscal_documents |
| | `financial_followups.py` | the fiscal documents of sales found changed |
| events | `events.py` | events, event_attendees |
| school | `school.py` | enrollments, deliveries |
| community | `community.py` | community_top_posts, community_commenters |
| course | `course.py` | lesson_comments |
| webhook | `webhook.py` | webhook_origins |

`context.py` holds what the readers share (the client, settings, the run's report) and the walk of a
whole paged list.
"""

from __future__ import annotations

from pydantic import BaseModel

from sources.platform.models import register_resource
from sources.platform.resources.community import COMMUNITY_COMMENTERS, COMMUNITY_TOP_POSTS
from sources.platform.resources.course import LESSON_COMMENTS
from sources.platform.resources.events import EVENT_ATTENDEES, EVENTS
from sources.platform.resources.financial import FISCAL_DOCUMENTS, TRANSFERS
from sources.platform.resources.school import DELIVERIES, ENROLLMENTS
from sources.platform.resources.store import (
    AFFILIATIONS,
    PRODUCT_CAMPAIGNS,
    PRODUCT_PARTNERS,
    PRODUCTS,
    SUBSCRIPTIONS,
)
from sources.platform.resources.store_sales import SALES
from sources.platform.resources.stream import Stream
from sources.platform.resources.webhook import WEBHOOK_ORIGINS

# In the order dlt extracts them, the one list of the source's resources.
STREAMS: dict[str, Stream] = {
    stream.name: stream
    for stream in (
        PRODUCTS,
        PRODUCT_CAMPAIGNS,
        PRODUCT_PARTNERS,
        AFFILIATIONS,
        TRANSFERS,
        SUBSCRIPTIONS,
        SALES,
        FISCAL_DOCUMENTS,
        EVENTS,
        EVENT_ATTENDEES,
        ENROLLMENTS,
        DELIVERIES,
        COMMUNITY_TOP_POSTS,
        COMMUNITY_COMMENTERS,
        LESSON_COMMENTS,
        WEBHOOK_ORIGINS,
    )
}

# The resources read whole, when due (`rescan.py`).
FULL_SCANS: tuple[str, ...] = tuple(name for name, stream in STREAMS.items() if stream.full_scan)


def stream_models() -> dict[str, type[BaseModel]]:
    """The model of each table the source loads (stream name -> model), for `forget` and the checks."""
    return {name: stream.model for name, stream in STREAMS.items()}


for _stream in STREAMS.values():  # names the table of each model in messages about its records
    register_resource(_stream.name, _stream.model)

__all__ = ["FULL_SCANS", "STREAMS", "Stream", "stream_models"]
