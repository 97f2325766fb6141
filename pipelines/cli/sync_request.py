"""What a `platform-sync sync` command line asks for, read and checked before any request: the same for
one pipeline (`main.py`) and for many accounts (`accounts.py`)."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass, field

from pipelines.sync.checkpoints import checkpoint_requests
from pipelines.sync.messages import HoldResourceOutcomes
from pipelines.sync.platform_pipeline import check_resource_names
from pipelines.sync.preflight import check_destination_name


@dataclass(frozen=True)
class SyncRequest:
    """The resources asked for (None: all), the source's options the command line sets, and the sale
    details per checkpoint (`[sync] checkpoint_requests`, `pipelines/sync/checkpoints.py`)."""

    resources: list[str] | None
    source_options: dict[str, object] = field(default_factory=dict)
    checkpoint_requests: int | None = None  # None: unset, the default (`Checkpoints.of`)


def sync_request(options: argparse.Namespace) -> SyncRequest:
    """The request of `options`, its resource and destination names checked (a ConfigurationError names
    a wrong one). Each resource that fails or is skipped is then said once per cause when the run ends,
    not as it happens."""
    resources = [r.strip() for r in options.resources.split(",") if r.strip()] if options.resources else None
    source_options: dict[str, object] = {"start_date": options.start_date} if options.start_date else {}
    if options.rescan:
        source_options["rescan"] = True
    if resources:
        check_resource_names(resources)
    check_destination_name(options.destination)
    checkpoint = checkpoint_requests()  # a bad value: one line, before any request
    logging.getLogger("platform_sync.source").addFilter(HoldResourceOutcomes())
    return SyncRequest(resources, source_options, checkpoint)
