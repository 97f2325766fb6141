"""Companion pipelines: the small pipelines that load beside the sync, into its destination and dataset.

The runs table (`runs.py`), webhook deliveries (`pipelines/webhooks/loader.py`), attendee imports and
forget requests (`pipelines/commands/`) each load through a pipeline of their own name, so that the sync
pipeline's state, trace and schema stay the sync's and a `--full-refresh` of the source never drops them.
Every one of them is built here, by the sync pipeline's rules: its destination, its dataset, its working
folder (`pipelines_dir`).
"""

from __future__ import annotations

from typing import Any

import dlt


def companion_pipeline(name: str, sync_pipeline: dlt.Pipeline) -> dlt.Pipeline:
    """A pipeline named `name` that writes into `sync_pipeline`'s destination and dataset, with its state
    in the same working folder.

    dlt names a DuckDB file without configured credentials after its pipeline, so for DuckDB the sync's
    resolved file is passed explicitly; other destinations take their credentials as the sync does."""
    target: Any = sync_pipeline.destination
    if sync_pipeline.destination.destination_name == "duckdb":
        config: Any = sync_pipeline.destination_client().config
        target = dlt.destinations.duckdb(str(config.credentials.database))
    return dlt.pipeline(
        pipeline_name=name,
        destination=target,
        dataset_name=sync_pipeline.dataset_name,
        pipelines_dir=sync_pipeline.pipelines_dir,
    )


def run_companion(companion: dlt.Pipeline, data: Any, **run_options: Any) -> Any:
    """`companion.run(data)`, once what a killed earlier run left in its working folder is loaded: with a
    package pending, dlt's `run` loads it and returns without extracting `data` (issue 53: the run after
    a kill lost its own run record)."""
    if companion.has_pending_data:
        companion.run()
    return companion.run(data, **run_options)
