"""The benchmark's soak section: the soak of `bench.soak` at a larger scale, ours against re-reading all.

Two soaks of the same unruly world, back to back: our scheduled sync with its settings (small sale
budget, re-verification share), and a contender that re-reads everything on every run (`full_refresh`,
an unbounded sale budget). Each ends with a fresh full sync of the final world; the figures are each
table's divergence from it (`bench.soak_compare`) and the requests every run spent (the sandbox's count).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.progress import log
from bench.soak import UNBOUNDED, SoakSettings, run_soak
from bench.soak_compare import divergence


def soak_settings(options: argparse.Namespace) -> SoakSettings:
    return SoakSettings(seed=options.seed, scale=options.soak_scale, days=options.soak_days)


def _one(settings: SoakSettings, work: Path, name: str) -> dict[str, Any]:
    log(f"soak ({name}): {settings.days} days at scale {settings.scale:,}")
    result = run_soak(settings, work / name, log=log)
    tables = divergence(result.scheduled, result.reference)
    figures = result.figures()
    figures["divergence"] = {table: d.counts() for table, d in tables.items()}
    figures["stale_sales"] = tables["sales"].stale if "sales" in tables else []
    return figures


def run_soak_section(options: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Figures of both soaks: settings, per-run requests, divergence per table."""
    ours = soak_settings(options)
    contender = replace(ours, full_refresh=True, sales_max_requests=UNBOUNDED)
    return {
        "target_rows": ours.scale,
        "days": ours.days,
        "reverify_per_run": ours.reverify_per_run,
        "ours": _one(ours, work / "soak", "ours"),
        "full_refresh": _one(contender, work / "soak", "full_refresh"),
    }
