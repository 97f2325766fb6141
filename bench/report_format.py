"""How the report writes its figures: numbers, ratios, shares, row counts and scale names.

Shared by the target table and the Markdown sections, so that a figure reads the same wherever it shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def fmt_x(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}x"


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def fmt_rows(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def scale_name(entry: Mapping[str, Any]) -> str:
    rows = entry["target_rows"]
    return f"{rows / 1e6:g}M" if rows >= 1_000_000 else f"{rows / 1e3:g}k"


def runs_text(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"
