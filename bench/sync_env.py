"""The environment of one `platform-sync` run of a benchmark: its own warehouse and dlt folder, the source
settings given (as dlt reads them from the environment), nothing of the caller's own settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def sync_environment(folder: Path, source: dict[str, Any], **settings: str) -> dict[str, str]:
    """The caller's environment without its source and destination settings; a DuckDB warehouse and a
    dlt folder in `folder`; `source` as `SOURCES__PLATFORM__*`; `settings` as given (e.g.
    `SYNC__CHECKPOINT_REQUESTS`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(folder / "warehouse.duckdb")
    env["DLT_DATA_DIR"] = str(folder / ".dlt")
    env.update(settings)
    for key, value in source.items():
        env[f"SOURCES__PLATFORM__{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env
