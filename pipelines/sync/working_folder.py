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

One working folder is also one warehouse's *place*: two DuckDB files (or two servers) with the same
destination and dataset would otherwise share the folder, and a sync into the second would continue the
first one's cursors and miss everything before them. So the folder names its warehouse in a file dlt
never writes (`platform_sync_warehouse.json`: destination, dataset, and where the data is: a DuckDB
file's absolute path, a server's host, port and database, never a password), written after a sync's
load; a warehouse that finds the folder named for another gets a folder of its own beside it,
`<pipelines_dir>/platform_sync-<destination>-<dataset>-<8 hex digits of its place>`, and a line saying
so. A folder that names no warehouse yet (new, or from a version before this) is the next sync's.
The DuckDB file is the run folder's own (`platform_pipeline._bounded_duckdb`), so two checkouts on one
machine are two places, and the second never continues (or loads into) the first one's.

Upgrading from a version that kept the working folder in `./.dlt/pipelines` of the folder it ran from:
that folder is moved to the new place the first time a command runs there for the same destination and
dataset, with a line saying so; it is never deleted, and a legacy folder that cannot be moved (the new
place is taken, another destination) is left where it is, with a warning naming both.
`PLATFORM_SYNC_KEEP_LEGACY_FOLDER=1` turns the move off (the test suite sets it).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
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


def set_aside_damaged_state(pipelines_dir: Path, pipeline_name: str) -> Path | None:
    """A working folder's `state.json` that does not read as a JSON object (emptied, or cut short by a
    full disk) stops dlt on every run: it is moved beside the folder (`<name>.state.json.damaged-<UTC
    time>`, kept for inspection) with one line, and dlt restores the state from the warehouse, where it
    is committed with each load (issue 53). Returns where it went, None when the state was sound."""
    state = pipelines_dir / pipeline_name / "state.json"
    try:
        if isinstance(json.loads(state.read_bytes()), dict):
            return None
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):
        pass
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = pipelines_dir / f"{pipeline_name}.state.json.damaged-{stamp}"
    os.replace(state, aside)
    logger.warning(
        "the working folder's state %s was damaged (not a JSON object): set aside as %s; the state is "
        "restored from the warehouse",
        state,
        aside,
    )
    return aside


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


WAREHOUSE_FILE = "platform_sync_warehouse.json"
# The fields of dlt's credentials that say where the data is (never a password or a key).
PLACE_FIELDS = ("database", "host", "port", "project_id", "location", "account", "warehouse", "bucket_url")


def warehouse_place(pipeline: dlt.Pipeline) -> str | None:
    """Where the pipeline loads, as one text (module docstring); None when the destination's
    configuration cannot be resolved (the run says what is missing, on its own)."""
    try:
        credentials: Any = pipeline.destination_client().config.credentials
    except Exception:
        return None
    place: dict[str, str] = {
        "destination": pipeline.destination.destination_name if pipeline.destination else "",
        "dataset": pipeline.dataset_name,
    }
    for name in PLACE_FIELDS:
        value = getattr(credentials, name, None)
        if value not in (None, ""):
            place[name] = str(value)
    database = place.get("database", "")
    if place["destination"] == "duckdb" and database and database != ":memory:":
        place["database"] = str(Path(database).resolve())
    return json.dumps(place, sort_keys=True)


def claimed_by(pipeline: dlt.Pipeline) -> str | None:
    """The place of the warehouse the working folder belongs to; None when it names none yet."""
    try:
        return (Path(pipeline.working_dir) / WAREHOUSE_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def folder_of_its_own(pipeline: dlt.Pipeline, place: str) -> Path:
    """The `pipelines_dir` of a warehouse that found the usual folder named for another."""
    named = json.loads(place)
    digest = hashlib.sha256(place.encode("utf-8")).hexdigest()[:8]
    return Path(pipeline.pipelines_dir) / (
        f"{pipeline.pipeline_name}-{named['destination']}-{named['dataset']}-{digest}"
    )


def claim(pipeline: dlt.Pipeline, place: str | None) -> None:
    """Name the warehouse in the working folder (after a sync loaded into it)."""
    if place is None or claimed_by(pipeline) == place:
        return
    target = Path(pipeline.working_dir) / WAREHOUSE_FILE
    if not target.parent.is_dir():
        return
    scratch = target.with_suffix(".tmp")
    scratch.write_text(place, encoding="utf-8")
    scratch.replace(target)
