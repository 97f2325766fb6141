"""A failing load takes back nothing loaded, and says in one line what ran out and what to do.

Found (issue 26, a DuckDB file on a full disk): dlt 1.31 declares DuckDB without `supports_transactions`,
so the SQL job that merges a table from the staging dataset (`DELETE ... WHERE EXISTS (staging)`, then
`INSERT ... SELECT` from staging) runs in autocommit: the delete committed, the insert failed with "No
space left on device", and the documents were gone from the warehouse until a later run loaded the
package. DuckDB itself rolls a failed commit back whole (measured on a full tmpfs), so the gap is dlt's
choice, and `transactional_loads` closes it with dlt's public capability override: each merge (a root
table and its nested tables, one SQL job) and each replace runs in one transaction, and a failed load
leaves every table as it was before the run or as it is after it. Replace tables are loaded the same
way (`insert-from-staging`) instead of being truncated first, which left a table empty when its insert
failed.
"""

from __future__ import annotations

import errno
import logging
import re
from collections.abc import Iterator
from typing import Any

import dlt
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.sync.defaults import set_value
from pipelines.sync.out_of_memory import out_of_memory_line, ran_out_of_memory

REPLACE_STRATEGY_KEY = "destination.replace_strategy"
_FILE = re.compile(r'(?:Could not write file|write to file|IO Error[^"]*?) "([^"]+)"')
_POOL_NOT_JOINED = "Shutdown of dlt thread pool"  # dlt's pool_runner, when threads of its pool did not end
_NO_SPACE = ("No space left on device", "Disk quota exceeded", "could not write all bytes")


class OneLineDltLogs(logging.Filter):
    """dlt's own log lines, as the command line shows them without --verbose: no traceback (dlt writes
    one, several KB, for every retry of every failing load job, which buried the real error), each
    message its first line, and none of the load step's job retries: how a load ends is said once, by
    the command (`failure_line`). Nor dlt's error that a thread of its pool did not end after a failed
    extract ("this process ... will lock indefinitely"): the command ends anyway (`pipelines/cli/
    exit_guard.py`), and says once why the step failed."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.module == "load" and record.levelno < logging.CRITICAL:
            return False
        if record.module == "pool_runner" and str(record.msg).startswith(_POOL_NOT_JOINED):
            return False
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        message = record.getMessage()
        if "\n" in message:
            record.msg, record.args = message.split("\n", 1)[0], None
        return True


def quiet_dlt_logs(verbose: bool) -> None:
    """Install `OneLineDltLogs` on dlt's logger, unless the user asked for everything."""
    logger = logging.getLogger("dlt")
    for present in [f for f in logger.filters if isinstance(f, OneLineDltLogs)]:
        logger.removeFilter(present)
    if not verbose:
        logger.addFilter(OneLineDltLogs())


def transactional_loads(pipeline: dlt.Pipeline) -> None:
    """Make each table's load one transaction on DuckDB (see the module's docstring)."""
    destination = pipeline.destination
    if destination is None or not destination.destination_type.endswith(".duckdb"):
        return
    if not destination.capabilities().supports_transactions:
        destination.caps_params["supports_transactions"] = True
    replace_from_staging()


def replace_from_staging() -> None:
    """Load replace tables from the staging dataset in one transaction, not truncated first."""
    set_value(REPLACE_STRATEGY_KEY, "insert-from-staging")


def failure_line(exc: PipelineStepFailed) -> str:
    """One line for a step that failed: what ran out and what to do, when that is what happened; else the
    first line of dlt's error."""
    step = exc.step
    pipeline: Any = getattr(exc, "pipeline", None)
    folder = str(getattr(pipeline, "working_dir", "") or "the pipeline's working folder")
    causes = list(_chain(exc.exception))
    text = " | ".join(str(cause) for cause in causes)
    keep = (
        "the tables keep what earlier runs loaded (each table is loaded in one transaction), and what "
        f"this run read waits in {folder} to be loaded first by the next run"
    )
    if any(_no_space(cause) for cause in causes) or any(marker in text for marker in _NO_SPACE):
        where = _written_file(causes, text)
        if where is None:
            where = f"the pipeline's working folder {folder}" if step != "load" else "the warehouse's disk"
        return (
            f"sync failed in the {step} step: no space left on the disk of {where}; free space there "
            f"and run again: {keep}"
        )
    if ran_out_of_memory(exc):  # MemoryError, a thread that cannot start, DuckDB's words: out_of_memory.py
        return out_of_memory_line(f"sync failed in the {step} step", keep)
    first = str(exc.exception).strip().splitlines()
    return f"sync failed in the {step} step: {first[0] if first else type(exc.exception).__name__}"


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _no_space(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _written_file(causes: list[BaseException], text: str) -> str | None:
    for cause in causes:
        if isinstance(cause, OSError) and cause.filename:
            return str(cause.filename)
    match = _FILE.search(text)
    return match.group(1) if match else None
