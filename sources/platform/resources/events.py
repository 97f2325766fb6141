"""Events: the configured ticketed events and their attendees (spec 4.6, 4.7)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import dlt

from sources.platform.fastpath.batches import Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE, fan_out
from sources.platform.models import Attendee, TicketedEvent
from sources.platform.records import new_rows
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream
from sources.platform_client.errors import NotFoundError, PermissionDeniedError
from sources.platform_client.paging import Page
from sources.platform_client.windows import iso_z


def read_events(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The configured events (the API cannot list them), one request each. An event answering 404 has its
    row marked deleted after the load (`pipelines/deletions.py`); one answering 403 marks nothing."""
    for event_id in ctx.settings.event_ids:
        if ctx.retirements.is_retired("event", event_id):  # the API does not know it (`retired.py`)
            continue
        try:
            event = ctx.client.request(stream.operation, path_params={"id": event_id})
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"event {event_id} in event_ids was not read: {exc}")
            if isinstance(exc, NotFoundError):
                ctx.retirements.not_found("event", event_id, str(exc))
                ctx.report.parent_gone(stream.name, (event_id,))
            continue
        ctx.retirements.found("event", event_id)
        yield ctx.parse(stream, [event])


def read_attendees(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Attendees of each configured event, each event with its own `modifiedAt` cursor (one resource,
    one cursor per event: `cursor.py` says why not dlt's). The events' lists are walked several at once
    (`fan_out`); each event's cursor is committed after its own last page.

    An event whose list answers 404 has its attendees marked deleted after the load and loses its cursor,
    so that if it comes back its whole list is read again and the merge clears the marks of those still
    there. A 403 or a failed page marks nothing and keeps the cursor."""
    cursors = dlt.current.resource_state().setdefault("modified_at", {})
    by_event = {
        event_id: ctx.cursor(cursors, event_id, stream, "modifiedAt")
        for event_id in ctx.settings.event_ids
        if not ctx.retirements.is_retired("event", event_id)  # the API does not know it (`retired.py`)
    }

    def walk(event_id: str) -> Callable[[], Iterator[Page]]:
        cursor = by_event[event_id]
        since = max(ctx.settings.start_date, cursor.since() or ctx.settings.start_date)
        params = {"modifiedAtGte": iso_z(since), "order": "asc"}
        return lambda: ctx.client.paginate(stream.operation, path_params={"id": event_id}, params=params)

    walks = [(event_id, walk(event_id)) for event_id in by_event]
    tolerated = (NotFoundError, PermissionDeniedError)
    for item in fan_out(walks, FAN_WALKS_AT_ONCE, FAN_PAGES_WAITING, tolerated):
        cursor = by_event[item.parent]
        if item.page is not None:
            tracked = ctx.records.read(stream, item.page.items, cursor=("modifiedAt",))
            rows = new_rows(cursor, tracked, "modifiedAt")
            ctx.offer_sale_ids(stream, rows)
            yield rows
        elif item.error is not None:
            ctx.report.warn(f"attendees of event {item.parent} were not read: {item.error}")
            if isinstance(item.error, NotFoundError):
                ctx.retirements.not_found("event", item.parent, str(item.error))
                ctx.report.parent_gone(stream.name, (item.parent,))
                cursors.pop(item.parent, None)
        else:
            cursor.commit()


EVENTS = Stream(
    "events",
    "event_details",
    TicketedEvent,
    ("id",),
    "merge",
    read=read_events,
    description="Configured ticketed events with their tickets and lots, every rescan_hours.",
    full_scan=True,
    fans_out=True,
    newest_by="modified_at",
    gone_by=("id",),
)
EVENT_ATTENDEES = Stream(
    "event_attendees",
    "list_attendees",
    Attendee,
    ("id",),
    "merge",
    read=read_attendees,
    description="Attendees of each configured event, changed since that event's cursor.",
    sale_ids_at=("invoiceId",),
    newest_by="modified_at",
    gone_by=("event_id",),
)
