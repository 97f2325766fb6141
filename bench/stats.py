"""Small statistics for noisy machines: medians, paired ratios, the spread of a few runs."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def median(values: Iterable[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else None


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """Median, min and max of the runs (a few runs: no standard deviation pretends to more)."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(present), "min": min(present), "max": max(present), "n": len(present)}


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def paired_ratios(
    runs: Sequence[Mapping[str, Mapping[str, Any]]], numerator: str, denominator: str, key: str = "seconds"
) -> dict[str, Any]:
    """Ratio of two contenders' figures run by run (each run measured both under the same load), and
    the median of those ratios."""
    per_run = []
    for run in runs:
        if numerator in run and denominator in run:
            value = ratio(run[numerator].get(key), run[denominator].get(key))
            if value is not None:
                per_run.append(value)
    return {"median": median(per_run), "per_run": per_run}


def dig(data: Mapping[str, Any], *path: str) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
