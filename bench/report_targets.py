"""The benchmark's targets, each checked against the figure that decides it.

The limits are the issue's; `python -m bench` prints the verdicts at the end, the report puts them in its
headline table, and figures.json keeps them under `targets`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_figures import median_ratio, sorted_scales, tolerance_ratio
from bench.report_format import fmt, fmt_pct, scale_name
from bench.stats import dig, ratio

FLOOR_RATIO_MAX = 2.0
REST_API_RATIO_MIN = 3.0
BOUND_RATIO_MAX = 1.10
INCREMENTAL_SHARE_MAX = 0.05
PEAK_MB_MAX = 500.0
PEAK_GROWTH_MAX = 1.5
TOLERANCE_MAX = 1.10  # the target: the tolerant path costs at most 10% of the throughput


def targets(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each target of the issue with the figure that decides it; `met` is None when not measured."""
    scales = sorted_scales(figures)
    out: list[dict[str, Any]] = []

    def add(target_id: str, text: str, value: float | None, met: bool | None, limit: str) -> None:
        out.append({"id": target_id, "text": text, "value": value, "limit": limit, "met": met})

    if scales:
        largest, smallest = scales[-1], scales[0]
        name = scale_name(largest)
        value = median_ratio(largest, "ours_over_floor")
        add(
            "floor_ratio",
            f"sync time / fetch-plus-load floor at {name} rows: "
            f"{fmt(value)}x (target <= {FLOOR_RATIO_MAX:g}x)",
            value,
            None if value is None else value <= FLOOR_RATIO_MAX,
            f"<= {FLOOR_RATIO_MAX}",
        )
        measured = [e for e in scales if median_ratio(e, "rest_api_over_ours") is not None]
        if measured:
            entry = measured[-1]
            value = median_ratio(entry, "rest_api_over_ours")
            add(
                "rest_api_ratio",
                f"generic rest_api (dlt defaults) time / sync time at {scale_name(entry)} rows: "
                f"{fmt(value)}x (target >= {REST_API_RATIO_MIN:g}x)",
                value,
                None if value is None else value >= REST_API_RATIO_MIN,
                f">= {REST_API_RATIO_MIN}",
            )
        value = median_ratio(largest, "rest_api_parquet_over_ours")
        add(
            "rest_api_parquet_ratio",
            f"generic rest_api with parquet time / sync time at {name} rows: {fmt(value)}x "
            f"(the same target against a rest_api tuned like ours)",
            value,
            None if value is None else value >= REST_API_RATIO_MIN,
            f">= {REST_API_RATIO_MIN}",
        )
        peak = dig(largest, "contenders", "ours", "median", "peak_rss_mb")
        add(
            "peak_memory",
            f"peak memory of the sync at {name} rows: {fmt(peak, 0)} MB (target < {PEAK_MB_MAX:g} MB)",
            peak,
            None if peak is None else peak < PEAK_MB_MAX,
            f"< {PEAK_MB_MAX}",
        )
        if len(scales) > 1:
            growth = ratio(peak, dig(smallest, "contenders", "ours", "median", "peak_rss_mb"))
            times = largest["target_rows"] / smallest["target_rows"]
            add(
                "memory_growth",
                f"peak memory at {name} / at {scale_name(smallest)} rows: {fmt(growth)}x "
                f"(target < {PEAK_GROWTH_MAX:g}x for {times:g}x the rows)",
                growth,
                None if growth is None else growth < PEAK_GROWTH_MAX,
                f"< {PEAK_GROWTH_MAX}",
            )
    limits = figures.get("rate_limits")
    if limits:
        med = limits["median"]
        value = med["wall_over_bound"]
        add(
            "rate_limit_bound",
            f"rate-limited full sync, wall time / bound: {fmt(value, 3)}x (target <= {BOUND_RATIO_MAX:g}x)",
            value,
            None if value is None else value <= BOUND_RATIO_MAX,
            f"<= {BOUND_RATIO_MAX}",
        )
        add(
            "no_429",
            f"429 answers with rate limits on: {med['rate_limited']} (target 0)",
            med["rate_limited"],
            med["rate_limited"] == 0,
            "== 0",
        )
        for key, what in (("incremental_time_share", "time"), ("incremental_request_share", "requests")):
            value = med[key]
            add(
                f"incremental_{what}",
                f"incremental run with nothing new, {what}: {fmt_pct(value)} of a full run's "
                f"(target < {100 * INCREMENTAL_SHARE_MAX:g}%)",
                value,
                None if value is None else value < INCREMENTAL_SHARE_MAX,
                f"< {INCREMENTAL_SHARE_MAX}",
            )
    value = tolerance_ratio(figures)
    if figures.get("tolerance"):
        entry = figures["tolerance"]
        add(
            "tolerance",
            f"sync on pages drifting at {entry['drift']:g} / on exact pages at {scale_name(entry)} rows: "
            f"{fmt(value, 3)}x (target <= {TOLERANCE_MAX:g}x: the tolerant path costs at most 10%)",
            value,
            None if value is None else value <= TOLERANCE_MAX,
            f"<= {TOLERANCE_MAX}",
        )
    return out
