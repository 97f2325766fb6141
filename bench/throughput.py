"""Section 1 of the benchmark: throughput, memory and models at one scale.

The sandbox (rate limits off) serves the world once, through the page server, which records the pages;
the contenders then read those same pages, run after run, in a rotating order, so that they measure their
own cost rather than the world's. Our last measured sync is then completed with the resources that are
not paged lists, and `dbt build` timed on it.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pendulum

from bench import harness
from bench.listings import ITEMS_PER_PAGE, LIST_RESOURCES, listings, source_options
from bench.progress import log
from bench.recording import page_store, record
from bench.settings import FULL_SYNC_SALES_CAP, LARGE_ROWS, NO_PACING, extract_workers, world_scale_for
from bench.stats import median, paired_ratios, ratio, spread

CONTENDER_LABELS = {
    "ours": "platform-sync (our source: Arrow for flat models, parquet, merge)",
    "ours_rows": "platform-sync with arrow_pages = false (dlt normalizes every row)",
    "rest_api": "generic rest_api, dlt defaults (insert_values)",
    "rest_api_parquet": "generic rest_api, parquet loader",
    "floor": "floor: httpx fetch + parse, DuckDB read_json",
}


# The worker task of the contenders that are variants of another one's configuration.
TASKS = {"rest_api_parquet": "rest_api", "ours_rows": "ours"}


def run_scale(options: argparse.Namespace, target_rows: int, work: Path) -> dict[str, Any]:
    """Throughput, memory and models at one scale."""
    from sandbox.running import running_sandbox_process

    scale = world_scale_for(target_rows)
    store = page_store(options, scale)
    log(f"scale {target_rows:,} rows: world scale {scale:,}, sandbox with rate limits off")
    out: dict[str, Any] = {"target_rows": target_rows, "world_scale": scale}
    with (
        running_sandbox_process(seed=options.seed, scale=scale, rate_limits=False) as sandbox,
        harness.page_server(sandbox.base_url, store) as pages,
    ):
        token = sandbox.token()
        catalog = sandbox.catalog()
        walks = [listing.as_dict() for listing in listings(catalog, pendulum.now("UTC"))]
        out["listings"] = len(walks)
        out["recording"] = record(options, pages, token, walks, store, work / "record")
        common = {"base_url": pages.url, "token": token, "listings": walks, "items_per_page": ITEMS_PER_PAGE}
        ours_options = {**source_options(pages.url, token, catalog), "rate_limit_time_scale": NO_PACING}
        configs: dict[str, dict[str, Any]] = {
            "floor": {**common, "workers": extract_workers()},
            "ours": {
                "source_options": ours_options,
                "resources": list(LIST_RESOURCES),
                "count_resources": list(LIST_RESOURCES),
            },
            "rest_api_parquet": {**common, "loader_file_format": "parquet"},
        }
        # The effect of the Arrow path: the same sync with every row normalized by dlt.
        configs["ours_rows"] = {**configs["ours"], "source_options": {**ours_options, "arrow_pages": False}}
        if target_rows <= options.rest_api_default_max_rows:
            configs["rest_api"] = {**common, "loader_file_format": None}
        plan = run_plan(options, target_rows, configs)
        models_here = options.models == "all" or (
            options.models == "largest" and target_rows == max(options.scales)
        )
        out["plan"] = plan
        runs: list[dict[str, Any]] = []
        server_cpu: dict[str, list[float]] = {name: [] for name in configs}
        misses = 0
        total_runs = max(plan.values())
        for index in range(total_runs):
            run: dict[str, Any] = {}
            order = list(configs)
            order = (
                order[index % len(order) :] + order[: index % len(order)]
            )  # rotate: no contender always first
            for name in order:
                if index >= plan.get(name, 0):
                    continue
                task = TASKS.get(name, name)
                pages.reset_stats()
                cpu_before = pages.cpu_seconds()
                directory = work / f"run{index + 1}" / name
                load_before = harness.load_average()
                result = harness.run_worker(task, configs[name], directory)
                result["load_average"] = {"before": load_before, "after": harness.load_average()}
                server_cpu[name].append(pages.cpu_seconds() - cpu_before)
                misses += int(pages.stats()["misses"])
                result["rows_per_second"] = ratio(result.get("items"), result.get("seconds"))
                run[name] = _slim(result)
                log(
                    f"  run {index + 1}/{plan[name]} {name}: {result['seconds']:.1f}s, "
                    f"{result.get('items', 0):,} items, {result['rows_per_second'] or 0:,.0f} rows/s, "
                    f"peak {result['peak_rss_mb']:.0f} MB"
                )
                shutil.rmtree(directory / "pages", ignore_errors=True)
                if not (name == "ours" and index == plan["ours"] - 1 and models_here):
                    harness.drop_databases(directory)
                    shutil.rmtree(directory / "pipelines", ignore_errors=True)  # dlt's loaded packages
            runs.append(run)
        out["runs"] = runs
        out["contenders"] = {name: summarize(name, runs) for name in configs}
        out["page_server"] = {
            "misses_during_measured_runs": misses,
            "cpu_seconds_per_run": {name: median(values) for name, values in server_cpu.items()},
        }
        out["items"] = out["contenders"]["floor"]["median"].get("items")
        out["rows_with_child_tables"] = out["contenders"]["ours"]["median"].get("rows")
        out["ratios"] = {
            "ours_over_floor": paired_ratios(runs, "ours", "floor"),
            "rest_api_over_ours": paired_ratios(runs, "rest_api", "ours"),
            "rest_api_parquet_over_ours": paired_ratios(runs, "rest_api_parquet", "ours"),
            "ours_rows_over_ours": paired_ratios(runs, "ours_rows", "ours"),
        }
        out["same_data"] = same_data(runs)
        if models_here:
            out["models"] = models_on_last_run(
                options, pages, token, catalog, work / f"run{plan['ours']}" / "ours", plan["ours"]
            )
    return out


def run_plan(options: argparse.Namespace, target_rows: int, configs: dict[str, Any]) -> dict[str, int]:
    """Runs per contender at this scale: `--runs`, or `--large-runs` from `LARGE_ROWS` rows on (a run of
    our sync at a million rows takes minutes here); the generic rest_api with dlt's default loader
    `--rest-api-default-runs` times (it is a comparison, not a target), rest_api with parquet
    `--rest-api-large-runs` times at large scales, and so does our sync without Arrow pages."""
    large = target_rows >= LARGE_ROWS
    runs = options.large_runs if large else options.runs
    plan = {name: runs for name in configs}
    if "rest_api" in plan:
        plan["rest_api"] = min(runs, options.rest_api_default_runs)
    if large:
        plan["rest_api_parquet"] = min(runs, options.rest_api_large_runs)
        plan["ours_rows"] = min(runs, options.rest_api_large_runs)
    return {name: count for name, count in plan.items() if count > 0}


def _slim(result: dict[str, Any]) -> dict[str, Any]:
    """What the figures keep of a run (warnings and long lists are cut)."""
    keep = dict(result)
    keep.pop("warnings", None)
    return keep


def summarize(name: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    mine = [run[name] for run in runs if name in run]
    steps = sorted({step for r in mine for step in r.get("steps", {})})
    return {
        "label": CONTENDER_LABELS.get(name, name),
        "runs": len(mine),
        "median": {
            "seconds": median(r["seconds"] for r in mine),
            "rows_per_second": median(r.get("rows_per_second") for r in mine),
            "peak_rss_mb": median(r.get("peak_rss_mb") for r in mine),
            "items": median(r.get("items") for r in mine),
            "rows": median(r.get("rows") for r in mine),
            "steps": {step: median(r.get("steps", {}).get(step) for r in mine) for step in steps},
        },
        "seconds": spread([r["seconds"] for r in mine]),
        "peak_rss_mb": spread([r.get("peak_rss_mb") for r in mine]),
        "peak_step": [r.get("memory", {}).get("peak_step") for r in mine if r.get("memory")],
    }


def same_data(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether every contender loaded the same items in every run (per resource where known)."""
    items = {name: sorted({int(run[name]["items"]) for run in runs if name in run}) for name in runs[0]}
    floor = runs[0].get("floor", {}).get("pages_by_resource", {})
    ours = runs[0].get("ours", {}).get("rows_by_table", {})
    per_resource = {
        resource: {"floor": counts["items"], "ours": ours.get(resource)} for resource, counts in floor.items()
    }
    values = {v for vs in items.values() for v in vs}
    return {"items_by_contender": items, "equal": len(values) == 1, "per_resource_first_run": per_resource}


def models_on_last_run(
    options: argparse.Namespace,
    pages: harness.PageServer,
    token: str,
    catalog: dict[str, Any],
    directory: Path,
    runs: int,
) -> dict[str, Any]:
    """Complete the last measured sync of our source with the resources that are not paged lists (so the
    models find every raw table), then time `dbt build` on it, several times.

    The top-up reads sale details for the first `FULL_SYNC_SALES_CAP` sale ids referenced by the loaded
    rows (the same ids every time, so their pages are recorded once), every product's campaigns and
    partners, the events, deliveries, top posts and webhook origins.
    """
    from sources.platform.resources import STREAMS

    others = [name for name in STREAMS if name not in LIST_RESOURCES]
    config = {
        "source_options": {
            **source_options(pages.url, token, catalog),
            "rate_limit_time_scale": NO_PACING,
            "sales_max_requests": FULL_SYNC_SALES_CAP,
        },
        "resources": others,
        "count_resources": [],
        "sale_ids_from_database": FULL_SYNC_SALES_CAP,
        "models_runs": runs,
    }
    log(f"  completing the last sync with {', '.join(others)}; then dbt build x{runs}")
    pages.reset_stats()
    result = harness.run_worker("ours", config, directory, result_name="topup")
    served = pages.stats()
    models = result.get("models", {})
    timings = models.get("seconds", [])
    statuses = models.get("runs", [])
    summary: dict[str, Any] = {
        "topup": {
            "resources": others,
            "seconds": result["seconds"],
            "rows": result.get("rows"),
            "rows_by_table": result.get("rows_by_table"),
            "requests": result.get("requests"),
            "failed": result.get("failed"),
            "peak_rss_mb": result.get("peak_rss_mb"),
            "pages_from_sandbox": served.get("misses"),
        },
        "database_mb": result.get("database_mb"),
        "models": {
            "runs": len(timings),
            "seconds": spread(timings),
            "nodes": statuses[0]["nodes"] if statuses else None,
            "ok": bool(statuses) and all(s["returncode"] == 0 for s in statuses),
            "failed_nodes": statuses[-1]["failed"] if statuses else [],
        },
    }
    log(
        f"  top-up {result['seconds']:.1f}s, {result.get('rows', 0):,} rows; "
        f"database {summary['database_mb'] or 0:,.0f} MB; "
        f"dbt build median {summary['models']['seconds']['median'] or 0:.1f}s "
        f"({'ok' if summary['models']['ok'] else 'FAILED'})"
    )
    harness.drop_databases(directory)
    return summary
