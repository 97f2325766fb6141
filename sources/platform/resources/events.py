"""Events: the configured ticketed events and their attendees (spec 4.6, 4.7)."""

from __future__ import annotations

from collections.abc import Iterator

import dlt

from sources.platform.fastpath.batches import Batch, Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE
from sources.platform.models import Attendee, TicketedEvent
from sources.platform.resources.context import SourceContext
from sources.platform.resources.page_lists import PageList
from sources.platform.resources.stream import Stream
from sources.platform_client.errors import NotFoundError, PermissionDeniedError
from sources.platform_client.windows import iso_z


def read_events(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The configured events (the API cannot list them), one request each. An event answering 404 has its
    row marked deleted after the load (`pipelines/deletions.py`); one answering 403 marks nothing."""
    # the API does not know a retired one (`retired.py`); the others several at once
    wanted = [eid for eid in ctx.settings.event_ids if not ctx.retirements.is_retired("event", eid)]
    for event_id, answer in ctx.client.each(stream.operation, wanted, lambda eid: {"id": eid}):
        try:
            event = answer.result()
        except (NotFoundError, PermissionDeniedError) as exc:
            ctx.report.warn(f"event {event_id} in event_ids was not read: {exc}")
            if isinstance(exc, NotFoundError):
                ctx.retirements.not_found("event", event_id, str(exc))
                ctx.report.parent_gone(stream.name, (event_id,))
            continue
        ctx.retirements.found("event", event_id)
        yield ctx.parse(stream, [event])


def read_attendees(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """Attendees of each configured event, each event with its own `modifiedAt` cursor (one resource,
    one cursor per event: `cursor.py` says why not dlt's). The events' lists are walked several at once
    (`SourceContext.pages`); each event's cursor is committed after its own last page.

    An event whose list answers 404 has its attendees marked deleted after the load and loses its cursor,
    so that if it comes back its whole list is read again and the merge clears the marks of those still
    there. A 403 or a failed page marks nothing and keeps the cursor."""
    cursors = dlt.current.resource_state().setdefault("modified_at", {})
    by_event = {
        event_id: ctx.cursor(cursors, event_id, stream, "modifiedAt")
        for event_id in ctx.settings.event_ids
        if not ctx.retirements.is_retired("event", event_id)  # the API does not know it (`retired.py`)
    }

    def page_list(event_id: str) -> PageList:
        cursor = by_event[event_id]
        since = max(ctx.settings.start_date, cursor.since() or ctx.settings.start_date)
        params = {"modifiedAtGte": iso_z(since), "order": "asc"}
        return PageList(params, {"id": event_id}, cursor=cursor, parent=event_id)

    def ended(event_id: str, error: BaseException | None) -> None:
        if error is None:  # the event's list was read to its end
            by_event[event_id].commit()
            return
        ctx.report.warn(f"attendees of event {event_id} were not read: {error}")
        if isinstance(error, NotFoundError):
            ctx.retirements.not_found("event", event_id, str(error))
            ctx.report.parent_gone(stream.name, (event_id,))
            cursors.pop(event_id, None)

    # Only the rows new at each event's cursor load (`page_lists`' "new" rule).
    yield from ctx.pages(
        stream,
        [page_list(event_id) for event_id in by_event],
        cursor_at=("modifiedAt",),
        keep="new",
        parallel=FAN_WALKS_AT_ONCE,
        depth=FAN_PAGES_WAITING,
        tolerated=(NotFoundError, PermissionDeniedError),
        on_end=ended,
    )


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
