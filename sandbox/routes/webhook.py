"""Webhook operations: the origins and the events they emit (spec 4.4)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef
from sandbox.world.api import World


def list_webhook_origins(world: World, call: Call) -> Any:
    return world.webhook_origins()


OPERATIONS: list[OperationDef] = [
    # Spec 4.4 documents 201 for this read; the sandbox answers what the spec documents.
    OperationDef("list_webhook_origins", "GET", "/webhook/v1/origin", (), list_webhook_origins, 201),
]
