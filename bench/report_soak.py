"""The report's soak section: how far a scheduled warehouse drifts from the platform, and at what cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_format import fmt_rows
from bench.stats import median

KINDS = ("missing", "ghosts_unflagged", "ghosts_flagged", "flagged_alive", "duplicated", "stale")


def _requests(entry: Mapping[str, Any]) -> tuple[float | None, int]:
    per_run = [run["requests"] for run in entry["runs"]]
    later = per_run[1:] or per_run
    return median(later), sum(per_run)


def soak_section(figures: Mapping[str, Any]) -> list[str]:
    entry = figures.get("soak")
    if not entry:
        return []
    ours, full = entry["ours"], entry["full_refresh"]
    settings = ours["settings"]
    (ours_median, ours_total), (full_median, full_total) = _requests(ours), _requests(full)
    lines = [
        "## Soak: scheduled syncs against a world that breaks our rules",
        "",
        f"{entry['days']} simulated days of daily syncs against the sandbox's unruly world "
        f"(docs/contracts.md part 2) at scale {entry['target_rows']:,}, then a fresh full sync of the final "
        f"world; our sync with `sales_max_requests = {settings['sales_max_requests']}` and "
        f"`sales_reverify_share = {settings['sales_reverify_share']:g}` ({entry['reverify_per_run']} sales "
        "re-verified a run), against a sync that re-reads everything every run (full refresh, every "
        "sale). Requests per run after the first (median): "
        f"**{fmt_rows(ours_median)}** against **{fmt_rows(full_median)}**; in all "
        f"{ours_total:,} against {full_total:,}.",
        "",
        "Records per table that differ from the fresh sync at the end (ours / full refresh): missing, "
        "deleted on the platform but not flagged, flagged deleted, flagged but alive, duplicated, stale.",
        "",
        "| table | records | " + " | ".join(KINDS) + " |",
        "|---|---:|" + "---:|" * len(KINDS),
    ]
    for table in sorted(ours["divergence"]):
        mine, theirs = ours["divergence"][table], full["divergence"].get(table, {})
        cells = [f"{mine.get(k, 0)} / {theirs.get(k, 0)}" for k in KINDS]
        lines.append(f"| {table} | {mine['records']:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Requests of each run (ours): " + ", ".join(str(run["requests"]) for run in ours["runs"]) + ".",
        "",
    ]
    if ours.get("cycle_runs"):
        lines += [
            f"The settings promise every known sale re-verified within {ours['cycle_runs']} runs "
            f"(ceil(known sales / {entry['reverify_per_run']})); stale sales at the end: "
            f"{len(ours.get('stale_sales', []))}.",
            "",
        ]
    return lines
