"""Where the pipeline keeps its working folder (state, schemas, pending packages, trace): dlt's own place.

dlt puts a pipeline's working folder in `<pipelines_dir>/<pipeline name>`: the `pipelines_dir` setting
if configured (`.dlt/config.toml` or `PIPELINES_DIR`), else `$DLT_DATA_DIR/pipelines`, else the user's
`~/.dlt/pipelines`. `platform-sync` follows it, so that `dlt pipeline platform_sync info|trace|drop` finds
the pipeline the way a dlt user expects.

One working folder holds one warehouse's state: a sync into another destination or dataset from the same
place would take it over (dlt keeps one destination per pipeline in its state). So only the default
warehouse (`duckdb`, dataset `platform_raw`) uses dlt's folder as it is; any other gets a folder of its own
beside it, `<pipelines_dir>/platform_sync-<destination>-<dataset>/platform_sync`
(`dlt pipeline --pipelines-dir <that folder> platform_sync info`).

Upgrading from a version that kept the working folder in `./.dlt/pipelines` of the folder it ran from:
that folder is moved to the new place the first time a command runs there for the same destination and
dataset, with a line saying so; it is never deleted, and a legacy folder that cannot be moved (the new
place is taken, another destination) is left where it is, with a warning naming both.
`PLATFORM_SYNC_KEEP_LEGACY_FOLDER=1` turns the move off (the test suite sets it).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import dlt
from dlt.common.pipeline import get_dlt_pipelines_dir

logger = logging.getLogger("platform_sync.pipeline")

LEGACY_PIPELINES_DIR = Path(".dlt") / "pipelines"
# Set (to anything but empty) to leave `./.dlt/pipelines` alone: the test suite sets it, so that a test
# run from a checkout never moves that checkout's own working folder into a temporary one.
KEEP_LEGACY_ENV = "PLATFORM_SYNC_KEEP_LEGACY_FOLDER"


def dlt_pipelines_dir() -> Path:
    """The folder dlt keeps pipelines in: `pipelines_dir` if configured, else dlt's default
    (`$DLT_DATA_DIR/pipelines`, `~/.dlt/pipelines`)."""
    configured: Any = dlt.config.get("pipelines_dir")
    return Path(str(configured)).expanduser() if configured else Path(get_dlt_pipelines_dir())


def pipelines_dir_for(
    pipeline_name: str, destination: str, dataset: str, default: tuple[str, str], base: Path | None = None
) -> Path:
    """The `pipelines_dir` of the pipeline syncing into `destination`/`dataset` (see the module's
    docstring): dlt's own for the `default` warehouse, a folder of its own beside it for any other."""
    base = base if base is not None else dlt_pipelines_dir()
    if (destination, dataset) == default:
        return base
    return base / f"{pipeline_name}-{destination}-{dataset}"


def adopt_legacy_folder(pipeline_name: str, pipelines_dir: Path, destination: str, dataset: str) -> None:
    """Move `./.dlt/pipelines/<pipeline_name>` (where versions before issue 28 kept it) to `pipelines_dir`
    when it belongs to this destination and dataset and the new place is free; else warn and leave it.
    Nothing is done when `PLATFORM_SYNC_KEEP_LEGACY_FOLDER` is set."""
    if os.environ.get(KEEP_LEGACY_ENV):
        return
    legacy = Path.cwd() / LEGACY_PIPELINES_DIR
    old = legacy / pipeline_name
    new = pipelines_dir / pipeline_name
    if not old.is_dir() or old.resolve() == new.resolve():
        return
    owner = _legacy_warehouse(pipeline_name, legacy)
    if new.exists() or owner != (destination, dataset):
        if owner == (destination, dataset):
            logger.warning(
                "the working folder %s of an earlier platform-sync is not used: %s is, since dlt's "
                "pipelines_dir is the working folder's place now (move one away to choose)",
                old,
                new,
            )
        return
    new.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(old), str(new))
    logger.warning("moved the pipeline's working folder from %s to %s (dlt's pipelines_dir)", old, new)


def _legacy_warehouse(pipeline_name: str, legacy: Path) -> tuple[str, str] | None:
    """(destination name, dataset) the legacy working folder's state was last run with, None if unknown.
    Read with `dlt.attach`, dlt's public way to open a working folder."""
    try:
        attached = dlt.attach(pipeline_name, pipelines_dir=str(legacy))
    except Exception:  # a broken or foreign folder: never moved
        return None
    if attached.destination is None:
        return None
    return attached.destination.destination_name, attached.dataset_name
