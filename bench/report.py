"""The benchmark's report: the targets checked against the figures, a Markdown page and a chart.

Everything here is computed from `figures.json` alone, so a report can be rebuilt from its figures
(`python -m bench.report bench/results/figures.json`). The parts are `bench.report_targets`,
`bench.report_chart` and `bench.report_markdown`; this module puts them together.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.report_chart import chart
from bench.report_markdown import markdown
from bench.report_targets import targets

__all__ = ["chart", "main", "markdown", "targets"]


def main(argv: Sequence[str] | None = None) -> int:
    """Rebuild report.md and chart.png next to a figures.json."""
    path = Path((argv if argv is not None else sys.argv[1:])[0])
    figures = json.loads(path.read_text())
    figures["targets"] = targets(figures)
    chart(figures, path.parent / "chart.png")
    (path.parent / "report.md").write_text(markdown(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
