"""`make bench` / `python -m bench`: how fast, how frugal and how economical platform-sync is, on loopback.

    python -m bench [--scales 100000,1000000] [--runs 3] [--quick] [--out bench/results]

Writes `report.md`, `figures.json` and `chart.png` to `--out`. Everything runs against the sandbox on
127.0.0.1; every measured run is a process of its own. Sections:

1. Throughput, memory and models, at each scale (sales-equivalent rows = items of the paged lists):
   the sandbox (rate limits off) serves the world once, through `bench.pageserver`, which records the
   pages; the contenders then read those same pages from the page server, run after run, so they measure
   their own cost rather than the world's. Contenders: our sync
   (`pipelines.sync.platform_pipeline.sync` of the list resources), dlt's generic `rest_api_source` over
   the same listings (dlt's defaults, and with parquet files), the floor (bare httpx fetch + parse +
   write to disk, then DuckDB `read_json`).
   Then one full sync of every resource (sale details capped) and `dbt build` on it.
2. Request economy with rate limits on: a full sync against the sandbox with its limits enforced (time
   scale shortening the windows) against the bound the limits impose, 429s, then an incremental run.
3. A remote API that other applications share (`bench/remote.py`, also runnable alone):
   latency hidden (150 ms a request), and 429s from another client of the account against the rate bound.
4. Soak (`bench.soak_section`): daily scheduled syncs against the sandbox's unruly world, then a fresh
   full sync; the divergence of every table and the requests each run spends, against a sync that
   re-reads everything every run.
5. Pseudonymisation cost (`bench.privacy_ab`, issue 31): our sync of the paged lists with the privacy
   option off and on, in pairs, on the same recorded pages (1M rows by default).
6. Many accounts (`bench.accounts`, issue 32): 3 and 6 accounts, each its own sandbox world with the
   remote section's latency and rate limits on, one worker syncing them a few at once: per account run
   wall time, requests, peak memory, warehouse growth; runs per hour per worker (docs/scale.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import accounts, harness, privacy_ab, remote, report
from bench.listings import ITEMS_PER_PAGE, LIST_RESOURCES
from bench.progress import log
from bench.provenance import duckdb_memory_limit, git_state, versions
from bench.ratelimits import run_rate_limits
from bench.settings import (
    DEFAULT_OUT,
    DEFAULT_TIME_SCALE,
    FULL_SYNC_SALES_CAP,
    ITEMS_PER_SALE,
    LARGE_ROWS,
    REST_API_DEFAULT_MAX_ROWS,
    WORK,
    extract_workers,
)
from bench.soak_section import run_soak_section
from bench.throughput import run_scale
from bench.tolerance import run_tolerance


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
    parser.add_argument(
        "--no-remote",
        action="store_true",
        help="skip the remote-API section (latency, foreign 429s: about 10 min; "
        "alone: python -m bench.remote)",
    )
    parser.add_argument(
        "--soak-scale", type=int, help="world scale of the soak section (default 2000; quick 300)"
    )
    parser.add_argument(
        "--soak-days",
        type=int,
        help="simulated days of daily syncs in the soak section (default 30; quick 21; 0 skips it)",
    )
    parser.add_argument(
        "--accounts",
        help="numbers of accounts of the many-accounts section (default 3,6; quick: 3; 0 skips it)",
    )
    parser.add_argument(
        "--privacy-rows",
        type=int,
        help="rows of the pseudonymisation-cost section (default 1000000; quick 50000)",
    )
    parser.add_argument(
        "--privacy-runs",
        type=int,
        help="pairs of runs, option off and on, of that section (default 4; quick 1; 0 skips it)",
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
    options.soak_scale = options.soak_scale or (300 if quick else 2000)
    options.accounts = [int(n) for n in (options.accounts or ("3" if quick else "3,6")).split(",") if int(n)]
    options.privacy_rows = options.privacy_rows or (50_000 if quick else 1_000_000)
    if options.privacy_runs is None:
        options.privacy_runs = 1 if quick else 4
    if options.soak_days is None:
        options.soak_days = 21 if quick else 30
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
        figures["tolerance"] = run_tolerance(options, largest, work / f"tolerance-{largest}")
    if not options.no_rate_limits:
        figures["rate_limits"] = run_rate_limits(options, work)
    if not options.no_remote:
        quick_sizes = ["--scale", "100", "--lists-scale", "1000", "--pairs", "1", "--foreign-scale", "100"]
        remote_options = remote.parse_args(quick_sizes if options.quick else [])
        figures["remote"] = remote.run_all(remote_options, work / "remote")
    if options.soak_days:
        figures["soak"] = run_soak_section(options, work)
    if options.privacy_runs:
        figures["privacy"] = privacy_ab.run_privacy(
            options, options.privacy_rows, options.privacy_runs, work / "privacy"
        )
    if options.accounts:
        accounts_options = accounts.parse_args(["--accounts", ",".join(map(str, options.accounts))])
        figures["accounts"] = accounts.run_accounts(accounts_options, work / "accounts")
    figures["load_average"]["end"] = harness.load_average()
    figures["git_at_end"] = git_state()
    figures["duration_seconds"] = time.perf_counter() - started
    figures["targets"] = report.targets(figures) + figures.get("remote", {}).get("targets", [])
    if "privacy" in figures:
        figures["targets"].append(privacy_ab.target(figures["privacy"]))
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "figures.json").write_text(json.dumps(figures, indent=2, default=str) + "\n")
    report.chart(figures, options.out / "chart.png")
    remote_section = remote.markdown({**figures, **figures["remote"]}) if "remote" in figures else ""
    privacy_section = privacy_ab.markdown(figures["privacy"]) if "privacy" in figures else ""
    accounts_section = accounts.markdown(figures["accounts"]) if "accounts" in figures else ""
    (options.out / "report.md").write_text(
        report.markdown(figures) + remote_section + privacy_section + accounts_section
    )
    if not options.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    log(f"done in {figures['duration_seconds'] / 60:.1f} min: {options.out / 'report.md'}")
    for target in figures["targets"]:
        log(f"  {_VERDICT[target['met']]} {target['text']}")
    return 0


_VERDICT = {True: "met    ", False: "NOT MET", None: "n/a    "}
