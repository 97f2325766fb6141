"""The report's section on an API that departs from its spec: drifting pages against exact ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_figures import tolerance_ratio
from bench.report_format import fmt, fmt_rows, fmt_x, scale_name
from bench.report_targets import TOLERANCE_MAX


def tolerance_section(figures: Mapping[str, Any]) -> list[str]:
    entry = figures.get("tolerance")
    if not entry:
        return []
    runs = entry["ratios"]["drifting_over_exact"]["per_run"]
    departed = entry.get("departed_records")
    return [
        "## An API that departs from its spec",
        "",
        f"Our sync of the paged lists at {scale_name(entry)} rows on the pages of a sandbox drifting at "
        f"{entry['drift']:g} ({f'{departed:,}' + ' departing records' if departed else 'departing records'}"
        ": nulls, unlisted values and fields, values of other types), against the same sync on the same "
        f"world's exact pages, in turns: {fmt(entry['seconds']['drifting'], 1)} s against "
        f"{fmt(entry['seconds']['exact'], 1)} s (median), **{fmt_x(tolerance_ratio(figures))}** "
        f"(runs: {', '.join(fmt_x(r) for r in runs)}; target <= {TOLERANCE_MAX:g}x). Items loaded: "
        f"{fmt_rows(entry['items']['drifting'])} and {fmt_rows(entry['items']['exact'])}.",
        "",
    ]
