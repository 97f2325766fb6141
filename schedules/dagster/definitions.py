"""Dagster definitions: the sync's resources (dagster-dlt) and the dbt models (dagster-dbt) as assets,
and an hourly schedule of both. (No `from __future__ import annotations` here: Dagster reads the
`context` parameter's annotation when the assets are defined.)

Run from the project folder (the pipeline's working folder is `.dlt/pipelines` there, and `.dlt/`
holds the configuration), with the `dagster` extra installed:

    dagster dev -f schedules/dagster/definitions.py
    dagster asset materialize -f schedules/dagster/definitions.py --select '*'

The sync assets run the same code as `platform-sync sync` (its run lock, its settings, its outcome
table); dagster-dlt only declares one asset per resource. A resource that fails or is skipped fails the
step after the others are materialized; a rejected token fails it too. The dbt models read the raw
tables under the run lock as a reader, as `platform-sync models` does.
"""

import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from dagster_dlt import dlt_assets
from dlt.extract.source import DltSource

from pipelines.dbt.runner import DBT_PROFILES_DIR, DBT_PROJECT_DIR, dbt_environment
from pipelines.sync.lock import run_lock
from pipelines.sync.platform_pipeline import make_pipeline, sync
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sources.platform import platform_source
from sources.platform.resources import STREAMS

ASSET_PREFIX = "dlt_platform_"  # dagster-dlt's key: dlt_<source>_<resource>
PIPELINE = make_pipeline()
DBT_PROJECT = DbtProject(
    project_dir=DBT_PROJECT_DIR,
    profiles_dir=DBT_PROFILES_DIR,
    target_path=Path("target") / "dagster",  # under dbt_models/, git-ignored
)
# the virtualenv's dbt, which need not be on PATH under a scheduler
DBT_EXECUTABLE = str(Path(sys.executable).with_name("dbt"))


def _dbt(profiles_dir: Path = DBT_PROFILES_DIR) -> DbtCliResource:
    return DbtCliResource(
        project_dir=DBT_PROJECT, profiles_dir=str(profiles_dir), dbt_executable=DBT_EXECUTABLE
    )


def _spec_source() -> DltSource:
    """The source, only so that dagster-dlt can list its resources: the run builds its own from config.
    Placeholder address and token when none is configured yet (nothing is requested here)."""
    return platform_source(
        base_url=os.environ.get("SOURCES__PLATFORM__BASE_URL", "http://127.0.0.1:9"),
        access_token=os.environ.get("SOURCES__PLATFORM__ACCESS_TOKEN", "not-used-to-list-resources"),
    )


@dlt_assets(dlt_source=_spec_source(), dlt_pipeline=PIPELINE, name="platform_sync", group_name="platform_raw")
def platform_raw(context: AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
    """`platform-sync sync` of the selected resources, one materialization per resource."""
    selected = sorted(key.path[-1].removeprefix(ASSET_PREFIX) for key in context.selected_asset_keys)
    resources = selected if len(selected) < len(STREAMS) else None
    started_at = run_started_at()
    with run_lock(PIPELINE, "write", command="dagster platform_sync"):
        result = sync(PIPELINE, resources)
        outcomes = outcome_rows(result, resources, started_at)
        record_run(PIPELINE, outcomes)
    problems = [row for row in outcomes if row["status"] in ("failed", "skipped")]
    for row in outcomes:
        if row["status"] in ("loaded", "not_due"):
            yield dg.MaterializeResult(
                asset_key=dg.AssetKey(ASSET_PREFIX + row["resource"]), metadata=_meta(row)
            )
    if problems:
        names = ", ".join(f"{row['resource']} ({row['status']}: {row['message']})" for row in problems)
        raise dg.Failure(description=f"not loaded: {names}")


def _meta(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"status": row["status"], "message": row["message"], "requests": row["requests"]}


class RawTablesFromDlt(DagsterDbtTranslator):
    """dbt's sources named after a resource are that resource's dlt asset. Child tables (`sales__items`)
    keep dbt's own key (one asset key cannot stand for two dbt sources): they are loaded with their
    resource, which the lineage shows through the staging models of the root tables."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        name = dbt_resource_props["name"]
        if dbt_resource_props["resource_type"] == "source" and name in STREAMS:
            return dg.AssetKey(ASSET_PREFIX + name)
        return super().get_asset_key(dbt_resource_props)


def _manifest() -> Path:
    """dbt's manifest, parsed again when a file of the dbt project is newer (`dbt parse` needs no
    connection)."""
    manifest = DBT_PROJECT.manifest_path
    files = [
        p for p in DBT_PROJECT_DIR.rglob("*.*") if p.suffix in (".sql", ".yml") and "target" not in p.parts
    ]
    if not manifest.exists() or max(p.stat().st_mtime for p in files) > manifest.stat().st_mtime:
        _dbt().cli(["parse", "--quiet"], target_path=DBT_PROJECT.target_path).wait()
    return DBT_PROJECT.manifest_path


@dbt_assets(manifest=_manifest(), project=DBT_PROJECT, dagster_dbt_translator=RawTablesFromDlt())
def platform_models(context: AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
    """`dbt build` on the pipeline's destination (the profile `platform-sync models` uses)."""
    with run_lock(PIPELINE, "read", command="dagster platform_models"), tempfile.TemporaryDirectory() as work:
        profiles_dir, env = dbt_environment(PIPELINE, Path(work))
        os.environ.update(env)  # the profile reads the database path and password from the environment
        yield from _dbt(profiles_dir).cli(["build"], context=context).stream()


everything = dg.define_asset_job("platform_sync_and_models", selection="*")

defs = dg.Definitions(
    assets=[platform_raw, platform_models],
    jobs=[everything],
    schedules=[dg.ScheduleDefinition(job=everything, cron_schedule="17 * * * *")],
    resources={"dbt": _dbt()},
)
