"""Webhook origins and the events they emit (spec part 2.11)."""

from __future__ import annotations

from .common import ApiModel


class WebhookEvent(ApiModel):
    name: str  # "<origin prefix>.<event name>"
    metadata: list[str]  # names of the data fields of the event
    description: str


class WebhookOrigin(ApiModel):
    id: str
    name: str
    prefix: str
    events: list[WebhookEvent]
