"""`make bench` / `python -m bench`: how fast, how frugal and how economical platform-sync is, on loopback.

    python -m bench [--scales 100000,1000000] [--runs 3] [--quick] [--out bench/results]

Writes `report.md`, `figures.json` and `chart.png` to `--out`. Everything runs against the sandbox on
127.0.0.1; every measured run is a process of its own. Sections:

1. Throughput, memory and models, at each scale (sales-equivalent rows = items of the paged lists):
   the sandbox (rate limits off) serves the world once, through `bench.pageserver`, which records the
   pages; the contenders then read those same pages from the page server, run after run, so they measure
   their own cost rather than the world's. Contenders: our sync (`pipelines.platform_pipeline.sync` of the
   list resources), dlt's generic `rest_api_source` over the same listings (dlt's defaults, and with
   parquet files), the floor (bare httpx fetch + parse + write to disk, then DuckDB `read_json`).
   Then one full sync of every resource (sale details capped) and `dbt build` on it.
2. Request economy with rate limits on: a full sync against the sandbox with its limits enforced (time
   scale shortening the windows) against the bound the limits impose, 429s, then an incremental run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pendulum

from bench import harness, report, tolerance
from bench.listings import ITEMS_PER_PAGE, LIST_RESOURCES, listings, source_options
from bench.stats import median, paired_ratios, ratio, spread

DEFAULT_OUT = harness.ROOT / "bench" / "results"
WORK = harness.ROOT / "bench" / "work"

# Items of the paged lists per sale of the world (docs: sandbox/world/__init__.py proportions):
# lesson comments N/2, fiscal documents ~0.47 N, subscriptions N/5, attendees ~N/11, transfers N/30,
# affiliations ~N/67, products N/200, commenters, enrollments. Measured 101,047 items at scale 76,000.
ITEMS_PER_SALE = 1.33
# The client's own pacing is switched off for throughput (the sandbox enforces no limits there either).
NO_PACING = 1e6
# Sale details cost one request per sale: the full sync (for the models) caps them.
FULL_SYNC_SALES_CAP = 1000
# dlt's default loader for DuckDB (insert_values) costs hours at a million rows; above this it is not run.
REST_API_DEFAULT_MAX_ROWS = 150_000
# From this many rows on a scale is "large": fewer runs (`--large-runs`) keep `make bench` near 30 minutes.
LARGE_ROWS = 500_000
# Time scale of the rate-limited section. The bound shrinks with it while a sync's fixed costs (start-up,
# normalize, load: 2-3 s) do not: at 60 the bound is ~19 s at world scale 1000 and those costs alone
# exceed the 10% over the bound that its target allows; at 20 it is ~58 s, about `make demo`'s. At the
# real API's scale, 1, they are negligible.
DEFAULT_TIME_SCALE = 20.0

CONTENDER_LABELS = {
    "ours": "platform-sync (our source: Arrow for flat models, parquet, merge)",
    "ours_rows": "platform-sync with arrow_pages = false (dlt normalizes every row)",
    "rest_api": "generic rest_api, dlt defaults (insert_values)",
    "rest_api_parquet": "generic rest_api, parquet loader",
    "floor": "floor: httpx fetch + parse, DuckDB read_json",
}


# The worker task of the contenders that are variants of another one's configuration.
TASKS = {"rest_api_parquet": "rest_api", "ours_rows": "ours"}


def world_scale_for(rows: int) -> int:
    return max(50, round(rows / ITEMS_PER_SALE))


def extract_workers() -> int:
    """`[extract] workers` of the project's `.dlt/config.toml` (dlt's default is 5)."""
    try:
        config = tomllib.loads((harness.ROOT / ".dlt" / "config.toml").read_text())
        return int(config.get("extract", {}).get("workers", 5))
    except (OSError, ValueError):
        return 5


def log(message: str) -> None:
    print(f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}", flush=True)


# -------------------------------------------------------------------------------------------- throughput


def run_scale(options: argparse.Namespace, target_rows: int, work: Path) -> dict[str, Any]:
    """Throughput, memory and models at one scale."""
    from sandbox.testing import running_sandbox_process

    scale = world_scale_for(target_rows)
    store = None
    if not options.no_store:
        store = WORK / "pages" / f"seed{options.seed}-scale{scale}-{harness.world_fingerprint()}"
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
                    _drop_databases(directory)
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


def record(
    options: argparse.Namespace,
    pages: harness.PageServer,
    token: str,
    walks: list[dict[str, Any]],
    store: Path | None,
    directory: Path,
) -> dict[str, Any]:
    """Fetch every page once through the page server: the pages not yet recorded come from the sandbox.

    When everything was recorded by an earlier benchmark, the live figures of that recording are reported.
    """
    meta_path = store / "recording.json" if store else None
    pages.reset_stats()
    config = {
        "base_url": pages.url,
        "token": token,
        "listings": walks,
        "items_per_page": ITEMS_PER_PAGE,
        "workers": extract_workers(),
        "load": False,
    }
    log(f"  recording pages through the page server ({pages.recorded_at_start:,} recorded before)")
    result = harness.run_worker("floor", config, directory)
    misses = int(pages.stats()["misses"])
    recording = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": result["seconds"],
        "pages": result["pages"],
        "items": result["items"],
        "bytes": result["bytes"],
        "pages_from_sandbox": misses,
        "pages_per_second": ratio(result["pages"], result["seconds"]),
        "workers": config["workers"],
        "live": misses == result["pages"],
    }
    if meta_path is not None:
        if recording["live"] or not meta_path.exists():
            meta_path.write_text(json.dumps(recording, indent=2))
        else:
            earlier = json.loads(meta_path.read_text())
            recording = {**earlier, "reused": True, "pages_from_sandbox_now": misses}
    log(
        f"  recorded {recording['pages']:,} pages, {recording['items']:,} items "
        f"({recording['pages_per_second'] or 0:.0f} pages/s live"
        f"{', reused' if recording.get('reused') else ''})"
    )
    return recording


def _drop_databases(directory: Path) -> None:
    for path in directory.glob("*.duckdb*"):
        path.unlink(missing_ok=True)


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
    _drop_databases(directory)
    return summary


# ------------------------------------------------------------------------------------------ rate limits


def run_rate_limits(options: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Full sync with the sandbox's limits on, against the bound they impose; then a run with nothing new."""
    from sandbox.ratelimit import DEFAULT_LIMIT, SPEC_LIMITS
    from sandbox.testing import running_sandbox_process

    scale, time_scale = options.rate_limit_scale, options.time_scale
    log(f"rate limits on: world scale {scale:,}, time scale {time_scale:g}")
    runs = []
    with running_sandbox_process(
        seed=options.seed, scale=scale, time_scale=time_scale, rate_limits=True
    ) as sandbox:
        catalog = sandbox.catalog()
        for index in range(options.rate_limit_runs):
            directory = work / f"ratelimits-run{index + 1}"
            token = sandbox.token()  # a new token: fresh buckets at the sandbox
            config = {
                "source_options": {
                    **source_options(sandbox.base_url, token, catalog),
                    "rate_limit_time_scale": time_scale,
                },
                "resources": None,
                "count_resources": list(LIST_RESOURCES),
            }
            sandbox.reset_stats()
            full = harness.run_worker("ours", config, directory)
            full_stats = sandbox.stats()
            sandbox.reset_stats()
            incremental = harness.run_worker("ours", config, directory)
            incremental_stats = sandbox.stats()
            run = economy(
                full, full_stats, incremental, incremental_stats, time_scale, SPEC_LIMITS, DEFAULT_LIMIT
            )
            runs.append(run)
            log(
                f"  run {index + 1}: full {run['full']['seconds']:.1f}s vs bound "
                f"{run['bound']['seconds']:.1f}s ({run['bound']['operation']}): "
                f"x{run['wall_over_bound']:.3f}, 429s: {run['full']['rate_limited']}; "
                f"incremental {run['incremental']['seconds']:.1f}s, {run['incremental']['requests']} requests"
            )
            _drop_databases(directory)
    return {
        "world_scale": scale,
        "time_scale": time_scale,
        "runs": runs,
        "median": {
            "full_seconds": median(r["full"]["seconds"] for r in runs),
            "bound_seconds": median(r["bound"]["seconds"] for r in runs),
            "wall_over_bound": median(r["wall_over_bound"] for r in runs),
            "wall_over_burst_bound": median(r["wall_over_burst_bound"] for r in runs),
            "extract_over_bound": median(r["extract_over_bound"] for r in runs),
            "full_steps": {
                step: median((r["full"]["steps"] or {}).get(step) for r in runs)
                for step in ("extract", "normalize", "load")
            },
            "rate_limited": max(
                (r["full"]["rate_limited"] + r["incremental"]["rate_limited"] for r in runs), default=0
            ),
            "incremental_time_share": median(r["incremental_time_share"] for r in runs),
            "incremental_request_share": median(r["incremental_request_share"] for r in runs),
            "full_requests": median(r["full"]["requests"] for r in runs),
            "incremental_requests": median(r["incremental"]["requests"] for r in runs),
        },
    }


def _api_requests(stats: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {op: counts for op, counts in stats.get("operations", {}).items() if op != "token_exchange"}


def economy(
    full: dict[str, Any],
    full_stats: dict[str, Any],
    incremental: dict[str, Any],
    incremental_stats: dict[str, Any],
    time_scale: float,
    limits: Mapping[str, int],
    default_limit: int,
) -> dict[str, Any]:
    """The bound of a run: for each operation, its requests over its rate (limit per scaled window); the
    slowest operation's figure is the bound. The burst-aware bound subtracts the first window's burst
    (the sandbox's buckets start full)."""
    window = 60.0 / time_scale
    operations = _api_requests(full_stats)
    bounds = {}
    for operation, counts in operations.items():
        requests = sum(counts.values())
        limit = limits.get(operation, default_limit)
        bounds[operation] = {
            "requests": requests,
            "limit_per_window": limit,
            "window_seconds": window,
            "seconds": requests / limit * window,
            "burst_seconds": max(0, requests - limit) / limit * window,
        }
    slowest = max(bounds, key=lambda op: bounds[op]["seconds"])
    bound: dict[str, Any] = {"operation": slowest, **bounds[slowest]}

    def side(result: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
        per_op = _api_requests(stats)
        return {
            "seconds": result["seconds"],
            "steps": result.get("steps"),
            "requests": sum(sum(c.values()) for c in per_op.values()),
            "requests_by_operation": {op: sum(c.values()) for op, c in sorted(per_op.items())},
            "rate_limited": sum(c.get("429", 0) for c in per_op.values()),
            "rows": result.get("rows"),
            "failed": result.get("failed"),
            "not_due": result.get("not_due", []),
            "peak_rss_mb": result.get("peak_rss_mb"),
        }

    full_side, incremental_side = side(full, full_stats), side(incremental, incremental_stats)
    return {
        "bound": bound,
        "bounds_by_operation": bounds,
        "full": full_side,
        "incremental": incremental_side,
        "wall_over_bound": ratio(full_side["seconds"], bound["seconds"]),
        "wall_over_burst_bound": ratio(full_side["seconds"], bound["burst_seconds"]),
        "extract_over_bound": ratio((full_side["steps"] or {}).get("extract"), bound["seconds"]),
        "incremental_time_share": ratio(incremental_side["seconds"], full_side["seconds"]),
        "incremental_request_share": ratio(incremental_side["requests"], full_side["requests"]),
    }


# ------------------------------------------------------------------------------------------------- main


def duckdb_memory_limit() -> str:
    """The memory limit `make_pipeline` sets for DuckDB (a configured `global_config` would override it)."""
    from pipelines.platform_pipeline import DUCKDB_LOAD_SETTINGS

    return str(DUCKDB_LOAD_SETTINGS["memory_limit"])


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("dlt", "duckdb", "pyarrow", "httpx", "pydantic", "dbt-core", "dbt-duckdb", "requests"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "-"
    return found


def git_state() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=harness.ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--", "sources", "pipelines", "sandbox")),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scales",
        help="sales-equivalent rows per scale, comma-separated (default 100000,1000000; quick: 5000,50000)",
    )
    parser.add_argument(
        "--runs", type=int, help="measured runs per contender and scale (default 3; quick: 1)"
    )
    parser.add_argument("--quick", action="store_true", help="small scales, one run: a few minutes")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where report.md, figures.json, chart.png go"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-store",
        action="store_true",
        help="record the pages again instead of reusing "
        "bench/work/pages/ from an earlier benchmark of the same world",
    )
    parser.add_argument(
        "--models",
        choices=("all", "largest", "none"),
        default="all",
        help="scales at which the top-up sync and dbt build run (default: %(default)s)",
    )
    parser.add_argument("--no-rate-limits", action="store_true", help="skip the rate-limited section")
    parser.add_argument(
        "--rest-api-default-max-rows",
        type=int,
        help="run rest_api with dlt's default loader "
        f"only up to this many rows (default {REST_API_DEFAULT_MAX_ROWS}; quick: 10000)",
    )
    parser.add_argument(
        "--rest-api-default-runs",
        type=int,
        default=1,
        help="runs of rest_api with the default loader (default: %(default)s; it is the slowest by far)",
    )
    parser.add_argument(
        "--large-runs", type=int, help=f"runs at scales of {LARGE_ROWS:,} rows or more (default 2)"
    )
    parser.add_argument(
        "--rest-api-large-runs",
        type=int,
        default=1,
        help="runs of rest_api with parquet, and of our sync without Arrow pages, at large scales "
        "(default: %(default)s; 0 skips them)",
    )
    parser.add_argument(
        "--rate-limit-scale", type=int, help="world scale with rate limits on (default 1000; quick 300)"
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=DEFAULT_TIME_SCALE,
        help="sandbox and client time scale with rate limits on (default: %(default)g)",
    )
    parser.add_argument(
        "--rate-limit-runs", type=int, help="rate-limited full + incremental pairs (default 2; quick 1)"
    )
    parser.add_argument(
        "--tolerance-runs",
        type=int,
        help="runs of our sync on exact and on drifting pages at the largest scale (default 2; quick 1; "
        "0 skips them)",
    )
    parser.add_argument("--keep-work", action="store_true", help="keep bench/work/run-* (logs, configs)")
    parser.add_argument("--work", type=Path, help="work folder (default bench/work/run-<time>)")
    options = parser.parse_args(argv)
    quick = options.quick
    options.scales = [
        int(s) for s in (options.scales or ("5000,50000" if quick else "100000,1000000")).split(",")
    ]
    options.runs = options.runs or (1 if quick else 3)
    if options.rest_api_default_max_rows is None:
        options.rest_api_default_max_rows = 10_000 if quick else REST_API_DEFAULT_MAX_ROWS
    options.large_runs = options.large_runs or (options.runs if quick else min(options.runs, 2))
    options.rate_limit_scale = options.rate_limit_scale or (300 if quick else 1000)
    options.rate_limit_runs = options.rate_limit_runs or (1 if quick else 2)
    if options.tolerance_runs is None:
        options.tolerance_runs = 1 if quick else 2
    return options


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    started = time.perf_counter()
    work = options.work or WORK / f"run-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    figures: dict[str, Any] = {
        "schema": 1,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
        "mode": "quick" if options.quick else "full",
        "machine": harness.machine(),
        "load_average": {"start": harness.load_average()},
        "versions": versions(),
        "git": git_state(),
        "settings": {
            "runs": options.runs,
            "seed": options.seed,
            "items_per_page": ITEMS_PER_PAGE,
            "extract_workers": extract_workers(),
            "items_per_sale": ITEMS_PER_SALE,
            "full_sync_sales_cap": FULL_SYNC_SALES_CAP,
            "rest_api_default_max_rows": options.rest_api_default_max_rows,
            "rest_api_default_runs": options.rest_api_default_runs,
            "large_rows": LARGE_ROWS,
            "large_runs": options.large_runs,
            "rest_api_large_runs": options.rest_api_large_runs,
            "list_resources": list(LIST_RESOURCES),
            "duckdb_memory_limit": duckdb_memory_limit(),
        },
        "throughput": [],
    }
    for target_rows in options.scales:
        figures["throughput"].append(run_scale(options, target_rows, work / f"scale-{target_rows}"))
    if options.tolerance_runs:
        largest = max(options.scales)
        figures["tolerance"] = tolerance.run_tolerance(options, largest, work / f"tolerance-{largest}")
    if not options.no_rate_limits:
        figures["rate_limits"] = run_rate_limits(options, work)
    figures["load_average"]["end"] = harness.load_average()
    figures["git_at_end"] = git_state()
    figures["duration_seconds"] = time.perf_counter() - started
    figures["targets"] = report.targets(figures)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "figures.json").write_text(json.dumps(figures, indent=2, default=str) + "\n")
    report.chart(figures, options.out / "chart.png")
    (options.out / "report.md").write_text(report.markdown(figures))
    if not options.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    log(f"done in {figures['duration_seconds'] / 60:.1f} min: {options.out / 'report.md'}")
    for target in figures["targets"]:
        log(f"  {_VERDICT[target['met']]} {target['text']}")
    return 0


_VERDICT = {True: "met    ", False: "NOT MET", None: "n/a    "}
