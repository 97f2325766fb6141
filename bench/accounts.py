"""Section 5 of the benchmark: many accounts (issue 32), in numbers for docs/scale.md.

    python -m bench.accounts [--accounts 3,6] [--scale 150] [--time-scale 20] [--latency-ms 150]
                             [--at-once 3] [--out DIR]

For N accounts (each its own sandbox world: seed 1..N, its own token, rate limits on, every request
answered `--latency-ms` late as in the remote section), one worker syncs them `--at-once` at a time:
first the initial sync of every account, then, an hour of the worlds' time later, the hourly run
(incremental). Each account's run is a process of its own (`bench.worker ours`, as `platform-sync sync`
runs one account) into its own DuckDB file, so its figures are its own: wall time, requests, 429s, peak
resident memory (with its helper processes), rows, and the warehouse's growth (file size after the run,
and what the hourly run added). With N = 3 the hourly run is also measured one account at a time.

Runs per hour per worker: 3600 s over the wall time the worker took for the batch, times N. The rate
limits' own share is given at the real API's pace too (`served_bound` at time scale 1: the served
requests of the slowest operation over its limit per minute): the bench shortens the windows
(`--time-scale`), the real API does not.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness
from bench.progress import log
from bench.remote import served_bound
from bench.settings import DEFAULT_TIME_SCALE, WORK

HOUR = 3600.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.accounts", description=__doc__)
    parser.add_argument("--accounts", default="3,6", help="numbers of accounts, comma-separated")
    parser.add_argument("--scale", type=int, default=150, help="world scale (sales) of each account")
    parser.add_argument("--time-scale", type=float, default=DEFAULT_TIME_SCALE)
    parser.add_argument("--latency-ms", type=float, default=150.0)
    parser.add_argument("--at-once", type=int, default=3, help="accounts one worker syncs at once")
    parser.add_argument("--out", type=Path, help="write accounts.json and accounts.md here")
    parser.add_argument("--work", type=Path, help="work folder (default bench/work/accounts-<time>)")
    options = parser.parse_args(argv)
    options.accounts = [int(n) for n in str(options.accounts).split(",") if n]
    return options


def _run_one(
    sandbox: Any, catalog: Mapping[str, Any], time_scale: float, directory: Path, name: str
) -> dict[str, Any]:
    """One account's sync in a process of its own; its figures and the sandbox's count of its requests."""
    from bench.listings import source_options

    config = {
        "source_options": {
            **source_options(sandbox.base_url, sandbox.token(), catalog),
            "rate_limit_time_scale": time_scale,
        },
        "resources": None,
    }
    sandbox.reset_stats()
    result = harness.run_worker("ours", config, directory, result_name=name)
    stats = sandbox.stats()
    counts = {op: dict(c) for op, c in stats.get("operations", {}).items() if op != "token_exchange"}
    return {
        "wall_seconds": result["wall_seconds"],
        "sync_seconds": result["seconds"],
        "requests": sum(sum(c.values()) for c in counts.values()),
        "rate_limited": sum(c.get("429", 0) for c in counts.values()),
        "peak_rss_mb": result["peak_rss_mb"],
        "rows": result["rows"],
        "failed": result["failed"],
        "database_mb": result["database_mb"],
        "real_rate_bound": served_bound(stats, 1.0) if counts else None,
    }


def _batch(
    sandboxes: Sequence[Any],
    catalogs: Sequence[Mapping[str, Any]],
    options: argparse.Namespace,
    work: Path,
    label: str,
    at_once: int,
) -> dict[str, Any]:
    """Every account's run, `at_once` at a time; the runs and the batch's wall time."""
    started = datetime.now(UTC)

    def one(index: int) -> dict[str, Any]:
        return _run_one(
            sandboxes[index], catalogs[index], options.time_scale, work / f"account-{index + 1}", label
        )

    with ThreadPoolExecutor(at_once) as pool:
        runs = list(pool.map(one, range(len(sandboxes))))
    wall = (datetime.now(UTC) - started).total_seconds()
    batch = {
        "label": label,
        "accounts": len(sandboxes),
        "at_once": at_once,
        "wall_seconds": wall,
        "runs_per_hour_per_worker": len(sandboxes) * HOUR / wall,
        "runs": runs,
        "median": {
            key: statistics.median(run[key] for run in runs)
            for key in ("wall_seconds", "requests", "peak_rss_mb", "rows", "database_mb")
        },
        "max_peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
    }
    log(
        f"  {label}: {len(sandboxes)} accounts, {at_once} at once: {wall:.1f} s, "
        f"{batch['runs_per_hour_per_worker']:.0f} runs/hour/worker, median run "
        f"{batch['median']['wall_seconds']:.1f} s, {batch['median']['requests']:.0f} requests, peak "
        f"{batch['max_peak_rss_mb']:.0f} MB"
    )
    return batch


def run_accounts(options: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The section's figures for each number of accounts."""
    from sandbox.running import running_sandbox_process

    out: dict[str, Any] = {
        "world_scale": options.scale,
        "time_scale": options.time_scale,
        "latency_ms": options.latency_ms,
        "at_once": options.at_once,
        "load_average_start": harness.load_average(),
        "by_accounts": [],
    }
    for count in options.accounts:
        log(f"accounts: {count}, world scale {options.scale}, time scale {options.time_scale:g}")
        folder = work / f"accounts-{count}"
        with ExitStack() as stack:
            sandboxes = [
                stack.enter_context(
                    running_sandbox_process(
                        seed=seed,
                        scale=options.scale,
                        time_scale=options.time_scale,
                        rate_limits=True,
                        faults=f"latency_ms={options.latency_ms:g}",
                    )
                )
                for seed in range(1, count + 1)
            ]
            catalogs = [sandbox.catalog() for sandbox in sandboxes]
            batches = [_batch(sandboxes, catalogs, options, folder, "first", options.at_once)]
            for sandbox in sandboxes:
                sandbox.advance(HOUR)
            batches.append(_batch(sandboxes, catalogs, options, folder, "hourly", options.at_once))
            if count == min(options.accounts):
                for sandbox in sandboxes:
                    sandbox.advance(HOUR)
                batches.append(_batch(sandboxes, catalogs, options, folder, "hourly-one-at-a-time", 1))
        for index in range(count):
            harness.drop_databases(folder / f"account-{index + 1}")
        out["by_accounts"].append({"accounts": count, "batches": batches})
    out["load_average_end"] = harness.load_average()
    return out


def markdown(figures: Mapping[str, Any]) -> str:
    """The section's report."""
    lines = [
        "",
        f"## Many accounts (issue 32): world scale {figures['world_scale']} each, time scale "
        f"{figures['time_scale']:g}, {figures['latency_ms']:g} ms a request",
        "",
        "Each account's run is a process of its own into its own DuckDB file; one worker runs the batch "
        "with the accounts given at once. Rate bound: the wait the real limits (time scale 1) impose on "
        "the run's requests, slowest operation. Load average at start "
        f"{figures['load_average_start']}, at end {figures.get('load_average_end')}.",
        "",
        "| accounts | run | at once | batch wall | runs/hour/worker | median run | median requests | "
        "peak RSS (max) | median rows | median DuckDB MB | rate bound at real pace (max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in figures["by_accounts"]:
        for batch in entry["batches"]:
            median = batch["median"]
            bounds = [run["real_rate_bound"]["seconds"] for run in batch["runs"] if run["real_rate_bound"]]
            lines.append(
                f"| {entry['accounts']} | {batch['label']} | {batch['at_once']} | "
                f"{batch['wall_seconds']:.1f} s | {batch['runs_per_hour_per_worker']:.0f} | "
                f"{median['wall_seconds']:.1f} s | {median['requests']:.0f} | "
                f"{batch['max_peak_rss_mb']:.0f} MB | {median['rows']:.0f} | {median['database_mb']:.1f} | "
                f"{max(bounds) if bounds else 0:.0f} s |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    work = options.work or WORK / f"accounts-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    figures = run_accounts(options, work)
    figures["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    figures["machine"] = harness.machine()
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "accounts.json").write_text(json.dumps(figures, indent=2, default=str) + "\n")
        (options.out / "accounts.md").write_text(markdown(figures))
    print(markdown(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
