"""The report's section on request economy with rate limits on, with its projection to real time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_format import fmt, fmt_pct, fmt_rows, fmt_x, runs_text
from bench.stats import dig, ratio


def rate_limit_section(limits: Mapping[str, Any] | None) -> list[str]:
    if not limits:
        return []
    med = limits["median"]
    first = limits["runs"][0]
    bound = first["bound"]
    window = 60 / limits["time_scale"]
    limit = bound["limit_per_window"]
    steps = med.get("full_steps") or {}
    full_steps = " / ".join(fmt(steps.get(step), 1) for step in ("extract", "normalize", "load"))
    projected_ratio, projected_share = _real_time_projection(limits)
    lines = [
        "## Request economy with rate limits on",
        "",
        f"World scale {limits['world_scale']:,}; sandbox and client time scale {limits['time_scale']:g} "
        f"({limit} requests a minute become {limit} per {window:g} s). A full sync of every resource with "
        "the default settings (sale details up to `sales_max_requests` = 5000) against the sandbox with "
        "its limits on, then a run with nothing new on the same pipeline folder and DuckDB file. The bound "
        "is the slowest rate-limited operation's requests divided by its rate; the sandbox's buckets start "
        "full, so the burst-aware bound subtracts one window's worth.",
        "",
        f"| figure | median of {runs_text(len(limits['runs']))} |",
        "|---|---|",
        f"| bound: {bound['operation']} requests / rate | {fmt(med['bound_seconds'], 1)} s "
        f"({bound['requests']} requests at {bound['limit_per_window']} per {bound['window_seconds']:g} s) |",
        f"| full sync, wall time | {fmt(med['full_seconds'], 1)} s |",
        f"| wall time / bound | {fmt(med['wall_over_bound'], 3)}x (burst-aware bound: "
        f"{fmt(med['wall_over_burst_bound'], 3)}x) |",
        f"| of which extract / normalize / load | {full_steps} s |",
        f"| extract (where the requests are) / bound | {fmt_x(med.get('extract_over_bound'))} |",
        f"| 429 answers, full and incremental runs (worst run) | {med['rate_limited']} |",
        f"| requests, full / incremental | {fmt_rows(med['full_requests'])} "
        f"/ {fmt_rows(med['incremental_requests'])} |",
        f"| incremental / full, time | {fmt_pct(med['incremental_time_share'])} |",
        f"| incremental / full, requests | {fmt_pct(med['incremental_request_share'])} |",
        "",
        f"Projection, not measured: at the API's real time scale (1) the bound and the rate-governed extract "
        f"grow {limits['time_scale']:g} times while normalize, load and the rest of the run do not, so the "
        f"same full sync would take about {fmt_x(projected_ratio)} the bound and the run with nothing new "
        f"about {fmt_pct(projected_share)} of its time (the request share does not depend on the time "
        "scale).",
        "",
        *_not_due_text(first["incremental"]),
        "Requests by operation in the first run:",
        "",
        "| operation | full | incremental | its own bound, s |",
        "|---|---|---|---|",
    ]
    full_ops = first["full"]["requests_by_operation"]
    incremental_ops = first["incremental"]["requests_by_operation"]
    for operation in sorted(set(full_ops) | set(incremental_ops)):
        lines.append(
            f"| {operation} | {full_ops.get(operation, 0)} | {incremental_ops.get(operation, 0)} "
            f"| {fmt(dig(first, 'bounds_by_operation', operation, 'seconds'), 1)} |"
        )
    lines.append("")
    return lines


def _not_due_text(incremental: Mapping[str, Any]) -> list[str]:
    """Which full-scan resources the run with nothing new left unread (figures from before `rescan_hours`
    existed do not say, and get no sentence)."""
    if "not_due" not in incremental:
        return []
    not_due = incremental["not_due"]
    if not not_due:
        return ["The run with nothing new read every resource again, the full-scan ones included.", ""]
    return [
        f"The run with nothing new skipped {len(not_due)} full-scan resources (which the API gives only "
        f"whole), as their last complete scan is younger than `rescan_hours`: {', '.join(not_due)}. Its "
        "requests are those of the other resources.",
        "",
    ]


def _real_time_projection(limits: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """Wall time / bound and incremental / full time if the windows were not shortened: the extract
    (paced by the limits) scales with the time scale, the rest of the run does not."""
    med = limits["median"]
    scale = float(limits["time_scale"])
    extract = (med.get("full_steps") or {}).get("extract")
    if not extract or not med.get("bound_seconds") or med.get("full_seconds") is None:
        return None, None
    fixed = med["full_seconds"] - extract
    full_real = extract * scale + fixed
    incremental = (
        med["incremental_time_share"] * med["full_seconds"] if med["incremental_time_share"] else None
    )
    return full_real / (med["bound_seconds"] * scale), ratio(incremental, full_real)
