"""The benchmark's soak section at a tiny scale: both soaks run for real and the report shows them.

The soak's own assertions (what may diverge) are tests/pipelines/sync/test_soak.py's; here the figures' shape,
that requests come from the sandbox's count, and that the contender re-reads every sale each run."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bench.report_soak import KINDS, soak_section
from bench.soak_section import run_soak_section

pytestmark = [pytest.mark.xdist_group("bench_soak"), pytest.mark.timeout(900)]


def test_soak_section_figures_and_report(tmp_path: Path) -> None:
    options = argparse.Namespace(seed=5, soak_scale=120, soak_days=2)
    figures = run_soak_section(options, tmp_path)
    ours, full = figures["ours"], figures["full_refresh"]
    assert (figures["days"], figures["target_rows"], figures["reverify_per_run"]) == (2, 120, 50)
    assert [len(ours["runs"]), len(full["runs"])] == [3, 3]
    assert ours["settings"]["full_refresh"] is False and full["settings"]["full_refresh"] is True
    for run in ours["runs"] + full["runs"]:
        assert run["requests"] == sum(n for op, n in run["by_operation"].items() if op != "token_exchange")
        assert run["failed"] == {}
    # the contender fetches every known sale on every run; ours at most its budget
    assert all(run["by_operation"].get("sale_details", 0) <= 100 for run in ours["runs"])
    assert min(run["by_operation"]["sale_details"] for run in full["runs"][1:]) > 100
    assert set(ours["divergence"]) == set(full["divergence"]) and "sales" in ours["divergence"]
    assert set(ours["divergence"]["sales"]) == {"records", *KINDS}
    text = "\n".join(soak_section({"soak": figures}))
    assert "## Soak: scheduled syncs against a world that breaks our rules" in text
    sales = ours["divergence"]["sales"]
    assert f"| sales | {sales['records']:,} | {sales['missing']} / " in text
    assert soak_section({}) == []
