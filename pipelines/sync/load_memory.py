"""A load DuckDB cannot fit in its memory limit is loaded again with more, instead of failing the run.

The sync bounds DuckDB's memory (`platform_pipeline.DUCKDB_LOAD_SETTINGS`, 128MB) so that its own memory
stays flat as the data grows; DuckDB spills to disk beyond it, but not every operator can. A merge over a
very wide table (an API that sent many fields the spec does not list, each a new column) can need more:
dlt retries the job with the same limit and fails the load, leaving the package pending. This module
loads that pending package again with the limit doubled, up to `CEILING_MB`, and says so in the log.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import dlt
from dlt.common.pipeline import LoadInfo
from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials
from dlt.pipeline.exceptions import PipelineStepFailed

logger = logging.getLogger("platform_sync.pipeline")

CEILING_MB = 2048
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(KB|KIB|MB|MIB|GB|GIB)\s*$", re.IGNORECASE)
_NO_MEMORY = re.compile(r"(?i)out of memory|failed to (pin|allocate) (block|data)")
_FACTOR = {"KB": 1 / 1000, "KIB": 1 / 1024, "MB": 1, "MIB": 1, "GB": 1000, "GIB": 1024}


def run_within_memory(pipeline: dlt.Pipeline, data: Any, **run_options: Any) -> LoadInfo:
    """`pipeline.run(data, **run_options)`; a load that fails for DuckDB's memory limit is loaded again
    with twice the limit, as long as the limit stays under `CEILING_MB`."""
    try:
        return pipeline.run(data, **run_options)
    except PipelineStepFailed as failed:
        error: PipelineStepFailed = failed
    credentials = _duckdb_credentials(pipeline)
    limit = _limit_mb(credentials)
    while error.step == "load" and _out_of_memory(error):
        if credentials is None or limit is None or limit * 2 > CEILING_MB:
            break
        # New credentials, so that dlt opens a new connection with the new limit.
        more = DuckDbCredentials(str(credentials.database))
        more.global_config = {**(credentials.global_config or {}), "memory_limit": f"{int(limit * 2)}MB"}
        more.local_config, more.pragmas = credentials.local_config, credentials.pragmas
        logger.warning(
            "DuckDB ran out of its %gMB memory limit loading a wide table; loading the pending package "
            "again with %dMB (set [destination.duckdb.credentials.global_config] memory_limit to choose)",
            limit,
            int(limit * 2),
        )
        try:
            return pipeline.load(credentials=more)
        except PipelineStepFailed as again:
            error, limit = again, limit * 2
    raise error


def _out_of_memory(failed: PipelineStepFailed) -> bool:
    """DuckDB's words for a limit reached: "Out of Memory Error", "failed to pin block" on commit."""
    return bool(_NO_MEMORY.search(str(failed)))


def _duckdb_credentials(pipeline: dlt.Pipeline) -> DuckDbCredentials | None:
    credentials = pipeline.destination_client().config.credentials
    return credentials if isinstance(credentials, DuckDbCredentials) else None


def _limit_mb(credentials: DuckDbCredentials | None) -> float | None:
    if credentials is None:
        return None
    match = _SIZE.match(str((credentials.global_config or {}).get("memory_limit", "")))
    return float(match.group(1)) * _FACTOR[match.group(2).upper()] if match else None
