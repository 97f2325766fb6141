"""The report's chart: throughput (rows/s) and peak memory (MB) by scale, per contender."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.report_figures import ORDER, sorted_scales
from bench.report_targets import PEAK_MB_MAX
from bench.stats import dig

STYLES = {
    "floor": "k--o",
    "ours": "C0-o",
    "ours_rows": "C2-d",
    "rest_api_parquet": "C1-s",
    "rest_api": "C3-^",
}


def chart(figures: Mapping[str, Any], path: Path) -> None:
    """Throughput (rows/s) and peak memory (MB) by scale, per contender."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted_scales(figures)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.4))
    for name in ORDER:
        points = [
            (e.get("items") or e["target_rows"], e["contenders"][name])
            for e in scales
            if dig(e, "contenders", name, "median", "seconds") is not None
        ]
        if not points:
            continue
        label = points[0][1]["label"]
        xs = [p[0] for p in points]
        left.plot(xs, [p[1]["median"]["rows_per_second"] for p in points], STYLES[name], label=label)
        right.plot(xs, [p[1]["median"]["peak_rss_mb"] for p in points], STYLES[name], label=label)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xlabel("rows (items of the paged lists)")
        axis.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    right.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    for axis in (left, right):
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        # a range within one decade (memory: 300-900 MB) would show no number at all otherwise
        axis.yaxis.set_minor_formatter(
            FuncFormatter(lambda value, _: f"{value:,.0f}" if f"{value:.0f}"[0] in "25" else "")
        )
    left.set_ylabel("rows per second (median)")
    left.set_title("Throughput, extract to load")
    right.set_ylabel("peak resident memory, MB (median)")
    right.set_title("Peak memory of the run's process")
    right.axhline(PEAK_MB_MAX, color="grey", linestyle=":", linewidth=1)
    right.annotate(
        f"target {PEAK_MB_MAX:g} MB",
        (0.01, PEAK_MB_MAX),
        xycoords=("axes fraction", "data"),
        va="bottom",
        fontsize=8,
        color="grey",
    )
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    machine = figures.get("machine", {})
    fig.suptitle(
        f"platform-sync bench, {str(figures.get('generated_at', ''))[:10]}, {machine.get('cores')} cores; "
        "medians of the runs (see report.md for run counts)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
