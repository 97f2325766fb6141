"""The working folder's state checked against the warehouse's before a sync (issue 53).

dlt commits the pipeline state into the destination with each load (`_dlt_pipeline_state`, one row per
version) and keeps a copy in the working folder. dlt restores the warehouse's copy when it is newer, but
never when it is older, and an older one means the data is behind the cursors: the DuckDB file copied
back from a backup, a load lost after its state was kept. Going on from the folder's cursors would skip
every record between, for good. So when the warehouse's newest loaded state is older than the folder's,
and the folder has no package waiting to load (which would be why it is ahead), the folder's state is
dropped (dlt's `Pipeline.drop`) and the run goes on from the warehouse's, restored at once
(`Pipeline.sync_destination`), with one line saying so.
"""

from __future__ import annotations

import logging

import dlt

logger = logging.getLogger("platform_sync.pipeline")


def warehouse_state_version(pipeline: dlt.Pipeline) -> int | None:
    """The newest state version the warehouse holds for this pipeline from a completed load; None when it
    holds none or cannot say (no dataset yet, a destination without SQL)."""
    try:
        with pipeline.sql_client() as client:
            states = client.make_qualified_table_name("_dlt_pipeline_state")
            loads = client.make_qualified_table_name("_dlt_loads")
            rows = client.execute_sql(
                f"select max(s.version) from {states} as s join {loads} as l on l.load_id = s._dlt_load_id "
                "where s.pipeline_name = %s and l.status = 0",
                pipeline.pipeline_name,
            )
    except Exception as exc:  # no dataset or state table yet: dlt's own first-run rules apply
        logger.debug("no state in the warehouse to compare with (%s)", exc)
        return None
    value = rows[0][0] if rows else None
    return int(value) if value is not None else None


def follow_the_warehouse(pipeline: dlt.Pipeline) -> bool:
    """Drop the working folder's state when the warehouse's is older (see the module); True if it did."""
    if pipeline.has_pending_data or not pipeline.default_schema_name:
        return False
    local = int(pipeline.state.get("_state_version", 0))
    remote = warehouse_state_version(pipeline)
    if remote is None or remote >= local:
        return False
    logger.warning(
        "the warehouse is behind this working folder (its state is version %s, the folder's %s: restored "
        "from a backup, or a load was lost): going on from the warehouse's state, so nothing after it is "
        "skipped",
        remote,
        local,
    )
    pipeline.drop()
    return True
