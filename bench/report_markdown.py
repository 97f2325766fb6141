"""The report as a Markdown page: its introduction and headline, then the section of each part.

Everything comes from `figures.json` alone; the sections themselves live in `bench.report_throughput`,
`bench.report_tolerance`, `bench.report_ratelimits`, `bench.report_soak` and `bench.report_method`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_figures import median_ratio, sorted_scales
from bench.report_format import fmt, fmt_pct, scale_name
from bench.report_method import method_section
from bench.report_ratelimits import rate_limit_section
from bench.report_soak import soak_section
from bench.report_throughput import memory_section, models_section, throughput_section
from bench.report_tolerance import tolerance_section
from bench.stats import dig


def markdown(figures: Mapping[str, Any]) -> str:
    scales = sorted_scales(figures)
    lines = _intro(figures)
    lines += _headline(figures, scales)
    lines += throughput_section(figures, scales)
    lines += memory_section(scales)
    lines += models_section(scales)
    lines += tolerance_section(figures)
    lines += rate_limit_section(figures.get("rate_limits"))
    lines += soak_section(figures)
    lines += method_section(figures)
    return "\n".join(lines) + "\n"


def _intro(figures: Mapping[str, Any]) -> list[str]:
    machine, versions, git = figures["machine"], figures["versions"], figures["git"]
    load = figures["load_average"]
    dirty = " with uncommitted changes in sources/, pipelines/ or sandbox/" if git["dirty"] else ""
    end = figures.get("git_at_end") or git
    if end["commit"] != git["commit"]:
        dirty += f" (commit {end['commit']} when it ended: the code changed during the benchmark)"
    return [
        "# platform-sync benchmark",
        "",
        f"Measured **{figures['generated_at'][:10]}** on **{machine['cores']} cores** "
        f"({machine['cpu_model'] or 'CPU model unknown'}, {machine['memory_gb']} GB RAM), "
        f"Python {machine['python']}, dlt {versions['dlt']}, DuckDB {versions['duckdb']}, "
        f"commit {git['commit']}{dirty}.",
        f"`{figures['command'].strip()}` ({figures['mode']} mode) took "
        f"{figures['duration_seconds'] / 60:.1f} min. Load average {load['start']} at the start and "
        f"{load.get('end')} at the end: the machine is shared, so absolute times are noisy. The headline "
        "figures are ratios of runs measured back to back, and every figure is a median of runs (the "
        "tables say how many).",
        "",
    ]


def _headline(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
    lines = ["## Headline", ""]
    for entry in scales:
        parts = [
            f"our sync takes **{fmt(median_ratio(entry, 'ours_over_floor'))}x** the fetch-plus-load floor"
        ]
        value = median_ratio(entry, "rest_api_over_ours")
        if value is not None:
            parts.append(f"the generic rest_api with dlt's defaults takes **{fmt(value)}x** our time")
        value = median_ratio(entry, "rest_api_parquet_over_ours")
        if value is not None:
            parts.append(f"rest_api with parquet files takes **{fmt(value)}x** our time")
        peak = dig(entry, "contenders", "ours", "median", "peak_rss_mb")
        parts.append(f"peak memory {fmt(peak, 0)} MB")
        lines.append(f"- **{scale_name(entry)} rows**: " + "; ".join(parts) + ".")
    limits = figures.get("rate_limits")
    if limits:
        med = limits["median"]
        lines.append(
            f"- **Rate limits on**: a full sync takes **{fmt(med['wall_over_bound'], 2)}x** the bound the "
            f"limits impose, with {med['rate_limited']} answers 429; a run with nothing new takes "
            f"**{fmt_pct(med['incremental_time_share'])}** of the time "
            f"and **{fmt_pct(med['incremental_request_share'])}**"
            " of the requests of a full run."
        )
    lines += ["", "| target | figure | met |", "|---|---|---|"]
    for target in figures.get("targets", []):
        met = {True: "yes", False: "**no**", None: "not measured"}[target["met"]]
        lines.append(f"| {target['id']} | {target['text']} | {met} |")
    lines += ["", "![throughput and memory by scale](chart.png)", ""]
    return lines
