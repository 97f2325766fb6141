"""Webhooks: the origins configured to send events, and their event kinds (spec 4.4)."""

from __future__ import annotations

from collections.abc import Iterator

from sources.platform.fastpath.batches import Rows
from sources.platform.models import WebhookOrigin
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import Stream


def read_webhook_origins(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Every origin, in one unpaged request."""
    yield ctx.parse(stream, ctx.client.request(stream.operation))


WEBHOOK_ORIGINS = Stream(
    "webhook_origins",
    "list_webhook_origins",
    WebhookOrigin,
    ("id",),
    "replace",
    read=read_webhook_origins,
    description="Webhook origins and their event kinds, replaced (as often as the rate budget allows).",
    full_scan=True,
)
