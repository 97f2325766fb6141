"""`dbt source freshness` on the raw tables: how long ago a run last brought each one a row.

The thresholds live with the sources (`dbt_models/models/staging/__sources.yml`); they are warn-level, so
a stale table is reported and fails nothing. Only the tables present are checked: a declared source
whose table was never loaded (a resource not configured) would make dbt's whole check fail.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dlt
import yaml  # type: ignore[import-untyped]  # as in dashboard/: no stubs installed

from pipelines.dbt.runner import DBT_PROJECT_DIR, dbt_target_path, run_models

SOURCES_YML = DBT_PROJECT_DIR / "models" / "staging" / "__sources.yml"


@dataclass(frozen=True)
class SourceFreshness:
    """One raw table's freshness as `dbt source freshness` judged it."""

    table: str
    status: str  # pass, warn, error, runtime error
    max_loaded_at: str | None
    age_seconds: float | None
    warn_after: str | None  # "26 hours"


@dataclass
class FreshnessResult:
    """What `dbt source freshness` said about the raw tables that are there."""

    returncode: int
    tables: list[SourceFreshness] = field(default_factory=list)
    output: str = ""

    @property
    def ran(self) -> bool:
        """dbt checked every table (stale ones only warn: no threshold is error-level)."""
        return self.returncode == 0 and all(t.status in ("pass", "warn") for t in self.tables)

    def summary(self) -> list[str]:
        """Lines for the terminal: the counts, then each table that is not fresh."""
        stale = [t for t in self.tables if t.status != "pass"]
        head = f"source freshness: {len(self.tables) - len(stale)} of {len(self.tables)} raw tables fresh"
        lines = [head + (":" if stale else ".")]
        for table in stale:
            age = f"{table.age_seconds / 3600:.1f} hours ago" if table.age_seconds is not None else "never"
            limit = f"; warn after {table.warn_after}" if table.warn_after else ""
            what = "stale" if table.status == "warn" else table.status
            lines.append(f"  {table.table}: {what}, last loaded {_utc(table.max_loaded_at)} ({age}{limit})")
        if self.returncode != 0 and not stale:
            lines.append(f"  dbt source freshness failed (exit status {self.returncode})")
        return lines


def _utc(timestamp: str | None) -> str:
    """dbt's ISO 8601 time as `2026-11-22 14:45 UTC`."""
    if not timestamp:
        return "never"
    moment = dt.datetime.fromisoformat(timestamp)
    moment = moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def declared_sources() -> list[str]:
    """The raw tables that dbt_models declares as sources of `platform`."""
    document = yaml.safe_load(SOURCES_YML.read_text())
    platform = next(source for source in document["sources"] if source["name"] == "platform")
    return [str(table["name"]) for table in platform["tables"]]


def source_freshness(
    pipeline: dlt.Pipeline, tables: Sequence[str], *, target_path: str | Path | None = None
) -> FreshnessResult:
    """`dbt source freshness` on the declared sources among `tables` (and dlt's `_dlt_loads`).

    A source whose table is not there (a resource never configured) would fail the whole check, so only
    the tables present are selected; the child tables declare no freshness of their own.
    """
    present = set(tables) | {"_dlt_loads"}
    selected = [f"source:platform.{name}" for name in declared_sources() if name in present]
    target = dbt_target_path(target_path)
    output_path = target / "sources.json"
    output_path.unlink(missing_ok=True)
    result = run_models(
        pipeline,
        "source freshness",
        extra_args=["--select", *selected, "--output", str(output_path)],
        target_path=target,
        echo=False,
    )
    return FreshnessResult(result.returncode, _freshness_results(output_path), result.output)


def _freshness_results(path: Path) -> list[SourceFreshness]:
    if not path.exists():
        return []
    results = []
    for entry in json.loads(path.read_text()).get("results", []):
        criteria = entry.get("criteria") or {}
        warn = criteria.get("warn_after") or {}
        results.append(
            SourceFreshness(
                table=str(entry["unique_id"]).rsplit(".", 1)[-1],
                status=str(entry["status"]),
                max_loaded_at=entry.get("max_loaded_at"),
                age_seconds=entry.get("max_loaded_at_time_ago_in_s"),
                warn_after=f"{warn['count']} {warn['period']}s" if warn.get("count") else None,
            )
        )
    return sorted(results, key=lambda r: r.table)
