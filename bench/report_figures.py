"""Lookups in `figures.json` that the report's parts share: the scales in order, the contenders shown,
the medians of the paired ratios.

Figures of older benchmarks lack keys added since: a missing figure is None (or no scales), not an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.stats import dig

# Contenders shown, in this order (figures of contenders since removed are ignored).
ORDER = ("ours", "ours_rows", "floor", "rest_api_parquet", "rest_api")


def sorted_scales(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    return sorted(figures.get("throughput", []), key=lambda e: e["target_rows"])


def median_ratio(entry: Mapping[str, Any], name: str) -> float | None:
    value = dig(entry, "ratios", name, "median")
    return None if value is None else float(value)


def tolerance_ratio(figures: Mapping[str, Any]) -> float | None:
    """Median time of the sync on drifting pages over the same sync on exact pages, run by run."""
    tolerance = figures.get("tolerance") or {}
    value = ((tolerance.get("ratios") or {}).get("drifting_over_exact") or {}).get("median")
    return float(value) if value is not None else None
