"""The many-accounts section of the benchmark (`bench.accounts`, issue 32) at a tiny scale: its figures
come from the runs (each account's own requests, memory, rows, warehouse), the hourly run is
incremental, and the report shows them. Structure and arithmetic only, never speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import accounts

pytestmark = [pytest.mark.xdist_group("bench_accounts"), pytest.mark.timeout(900)]


def test_the_accounts_section_measures_each_account_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = ["--accounts", "2", "--scale", "50", "--time-scale", "600", "--latency-ms", "20"]
    assert accounts.main([*options, "--at-once", "2", "--out", str(out), "--work", str(tmp_path / "w")]) == 0
    figures = json.loads((out / "accounts.json").read_text())
    (entry,) = figures["by_accounts"]
    assert entry["accounts"] == 2
    first, hourly, one_at_a_time = entry["batches"]
    assert [b["label"] for b in entry["batches"]] == ["first", "hourly", "hourly-one-at-a-time"]
    assert [b["at_once"] for b in entry["batches"]] == [2, 2, 1]
    for batch in entry["batches"]:
        assert len(batch["runs"]) == 2
        assert batch["runs_per_hour_per_worker"] == pytest.approx(2 * 3600 / batch["wall_seconds"])
        for run in batch["runs"]:
            assert run["failed"] == {}
            assert run["peak_rss_mb"] > 50  # a Python process with dlt, DuckDB and Arrow loaded
            assert run["database_mb"] > 0
            assert run["real_rate_bound"]["seconds"] > 0
    for index in range(2):
        # the hourly run is incremental: fewer requests than the first, onto the same warehouse (no sale
        # fetched again but those that can change; the full scans as the budget allows, here all of them)
        assert hourly["runs"][index]["requests"] < first["runs"][index]["requests"]
        assert hourly["runs"][index]["database_mb"] >= first["runs"][index]["database_mb"]
        assert first["runs"][index]["rows"] > 0
    # two worlds (seeds 1 and 2): each account's own rows
    assert first["runs"][0]["rows"] != first["runs"][1]["rows"]
    text = (out / "accounts.md").read_text()
    assert "## Many accounts (issue 32)" in text
    assert f"| 2 | hourly-one-at-a-time | 1 | {one_at_a_time['wall_seconds']:.1f} s |" in text
