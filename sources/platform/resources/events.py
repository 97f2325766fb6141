"""Events: the configured ticketed events and their attendees (spec 4.6, 4.7)."""

from __future__ import annotations

from collections.abc import Iterator

import dlt

from sources.platform import models
from sources.platform.fastpath.batches import Rows
from sources.platform.records import new_rows
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream
from sources.platform_client.errors import NotFoundError, PermissionDeniedError
from sources.platform_client.windows import iso_z


def read_events(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The configured events (the API cannot list them), one request each."""
    for event_id in ctx.settings.event_ids:
        if ctx.retirements.is_retired("event", event_id):  # the API does not know it (`retired.py`)
            continue
        try:
            event = ctx.client.request(stream.operation, path_params={"id": event_id})
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"event {event_id} in event_ids was not read: {exc}")
            if isinstance(exc, NotFoundError):
                ctx.retirements.not_found("event", event_id, str(exc))
            continue
        ctx.retirements.found("event", event_id)
        yield ctx.parse(stream, [event])


def read_attendees(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Attendees of each configured event, each event with its own `modifiedAt` cursor (one resource,
    one cursor per event: `cursor.py` says why not dlt's)."""
    cursors = dlt.current.resource_state().setdefault("modified_at", {})
    for event_id in ctx.settings.event_ids:
        cursor = ctx.cursor(cursors, event_id, stream, "modifiedAt")
        since = max(ctx.settings.start_date, cursor.since() or ctx.settings.start_date)
        params = {"modifiedAtGte": iso_z(since), "order": "asc"}
        if ctx.retirements.is_retired("event", event_id):  # the API does not know it (`retired.py`)
            continue
        try:
            for page in ctx.client.paginate(stream.operation, path_params={"id": event_id}, params=params):
                tracked = ctx.records.read(stream, page.items, cursor=("modifiedAt",))
                rows = new_rows(cursor, tracked, "modifiedAt")
                ctx.offer_sale_ids(stream, rows)
                yield rows
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"attendees of event {event_id} were not read: {exc}")
            if isinstance(exc, NotFoundError):
                ctx.retirements.not_found("event", event_id, str(exc))
            continue
        cursor.commit()


EVENTS = Stream(
    "events",
    "event_details",
    models.TicketedEvent,
    ("id",),
    "merge",
    read=read_events,
    description="Configured ticketed events with their tickets and lots, every rescan_hours.",
    full_scan=True,
    fans_out=True,
    newest_by="modified_at",
)
EVENT_ATTENDEES = Stream(
    "event_attendees",
    "list_attendees",
    models.Attendee,
    ("id",),
    "merge",
    read=read_attendees,
    description="Attendees of each configured event, changed since that event's cursor.",
    sale_ids_at=("invoiceId",),
    newest_by="modified_at",
)
