"""Section 2 of the benchmark: request economy with the sandbox's rate limits on.

A full sync of every resource against the sandbox with its limits enforced (the time scale shortening
their windows), against the bound those limits impose on it, and the 429 answers; then a run with
nothing new on the same pipeline, against the full one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench import harness
from bench.listings import LIST_RESOURCES, source_options
from bench.progress import log
from bench.stats import median, ratio


def run_rate_limits(options: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Full sync with the sandbox's limits on, against the bound they impose; then a run with nothing new."""
    from sandbox.ratelimit import DEFAULT_LIMIT, SPEC_LIMITS
    from sandbox.running import running_sandbox_process

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
            harness.drop_databases(directory)
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
