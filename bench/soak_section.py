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
    """Our settings: a sale budget of a quarter of the world's sales (at least 100), half of it for the
    re-verification cycle, so that the configured sales load within about 8 runs and every known sale is
    re-verified within about 8."""
    return SoakSettings(
        seed=options.seed,
        scale=options.soak_scale,
        days=options.soak_days,
        sales_max_requests=max(100, options.soak_scale // 4),
    )


def _one(settings: SoakSettings, work: Path, name: str) -> dict[str, Any]:
    log(f"soak ({name}): {settings.days} days at scale {settings.scale:,}")
    result = run_soak(settings, work / name, log=log)
    tables = divergence(result.scheduled, result.reference)
    figures = result.figures()
    figures["divergence"] = {table: d.counts() for table, d in tables.items()}
    figures["stale_sales"] = tables["sales"].stale if "sales" in tables else []
    known = tables["sales"].records if "sales" in tables else 0
    figures["cycle_runs"] = settings.cycle_runs(known) if not settings.full_refresh else None
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


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.soak_section`: the soak section alone; its figures as JSON, the report section."""
    import json

    from bench.report_soak import soak_section

    parser = argparse.ArgumentParser(prog="python -m bench.soak_section", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--soak-scale", type=int, default=2000)
    parser.add_argument("--soak-days", type=int, default=30)
    parser.add_argument("--work", type=Path, required=True, help="folder for the warehouses and figures")
    options = parser.parse_args(argv)
    figures = run_soak_section(options, options.work)
    (options.work / "soak.json").write_text(json.dumps(figures, indent=2) + "\n")
    print("\n".join(soak_section({"soak": figures})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
