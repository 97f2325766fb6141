"""The benchmark harness end to end at a tiny scale: every section runs for real and the report, the
figures and the chart are written from those runs. No timing is asserted: speed targets belong to
`make bench` and its report, never to tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import cli, privacy_ab, report
from bench.listings import LIST_RESOURCES
from bench.pageserver import request_key
from sources.platform.resources import FULL_SCANS

COMMITTED_FIGURES = Path(__file__).parents[2] / "bench" / "results" / "figures.json"

# The first test also sets the harness run up (about a minute and a half on 2 idle cores).
pytestmark = [pytest.mark.xdist_group("bench_smoke"), pytest.mark.timeout(900)]


def test_request_key_ignores_parameter_order_and_time_of_day() -> None:
    a = request_key("get", "/store/v1/x?page=2&startDate=2026-11-23T18:51:02.123Z&itemsPerPage=100")
    b = request_key("GET", "/store/v1/x?itemsPerPage=100&page=2&startDate=2026-11-23T00:00:00.000Z")
    assert a == b == "GET /store/v1/x?itemsPerPage=100&page=2&startDate=2026-11-23"
    assert request_key("GET", "/store/v1/x?page=3") != request_key("GET", "/store/v1/x?page=2")


def test_committed_figures_still_render(tmp_path: Path) -> None:
    """Figures of an older benchmark (contenders since removed, keys added since) rebuild a report."""
    figures = json.loads(COMMITTED_FIGURES.read_text())
    text = report.markdown({**figures, "targets": report.targets(figures)})
    assert "## Method" in text and "prototype" not in text
    report.chart(figures, tmp_path / "chart.png")


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("bench-results")
    work = tmp_path_factory.mktemp("bench-work")
    code = cli.main(
        [
            "--scales",
            "250,500",
            "--runs",
            "1",
            "--out",
            str(out),
            "--work",
            str(work),
            "--no-store",
            "--rate-limit-scale",
            "120",
            "--time-scale",
            "600",
            "--rate-limit-runs",
            "1",
            "--models",
            "largest",
            "--tolerance-runs",
            "1",
            "--soak-scale",
            "120",
            "--soak-days",
            "1",
            "--privacy-rows",
            "500",
            "--privacy-runs",
            "1",
            "--accounts",
            "0",  # tests/bench/test_bench_accounts.py runs that section alone
            "--no-remote",  # about 10 min even at its quick sizes; tests/bench/test_remote_targets.py
        ]
    )
    assert code == 0
    return out, json.loads((out / "figures.json").read_text())


def test_writes_report_figures_and_chart(bench_run: tuple[Path, dict]) -> None:
    out, figures = bench_run
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / "report.md").read_text()
    for heading in (
        "## Headline",
        "## Throughput",
        "## Memory",
        "## Models",
        "## An API that departs from its spec",
        "## Request economy",
        "## Soak: scheduled syncs against a world that breaks our rules",
        "## Pseudonymisation cost (issue 31)",
        "## Method",
    ):
        assert heading in text
    assert f"{figures['machine']['cores']} cores" in text
    assert figures["generated_at"][:10] in text
    assert figures["machine"]["cores"] >= 1
    assert {t["id"] for t in figures["targets"]} >= {
        "floor_ratio",
        "rest_api_ratio",
        "peak_memory",
        "memory_growth",
        "rate_limit_bound",
        "no_429",
        "incremental_time",
        "incremental_requests",
        "tolerance",
        "privacy_cost",
    }
    assert figures["targets"] == [*report.targets(figures), privacy_ab.target(figures["privacy"])]


def test_privacy_cost_figures_come_from_pairs_of_runs(bench_run: tuple[Path, dict]) -> None:
    _, figures = bench_run
    privacy = figures["privacy"]
    assert privacy["rows"] == 500 and privacy["page_server_misses"] == 0
    (pair,) = privacy["pairs"]
    assert pair["order"] == ["off", "on"]
    off, on = pair["off"], pair["on"]
    assert off["items"] == on["items"] > 0 and privacy["same_items"]
    assert on["rows_by_table"] == off["rows_by_table"]  # the option changes values, never rows
    assert pair["ratio"] == pytest.approx(on["seconds"] / off["seconds"]) == privacy["median_ratio"]


def test_throughput_figures_come_from_the_runs(bench_run: tuple[Path, dict]) -> None:
    _, figures = bench_run
    assert [entry["target_rows"] for entry in figures["throughput"]] == [250, 500]
    for entry in figures["throughput"]:
        assert entry["recording"]["pages"] > 0 and entry["recording"]["pages_from_sandbox"] > 0
        assert entry["page_server"]["misses_during_measured_runs"] == 0  # every contender read recorded pages
        (run,) = entry["runs"]
        assert set(run) == {"ours", "ours_rows", "floor", "rest_api", "rest_api_parquet"}
        items = {name: result["items"] for name, result in run.items()}
        assert len(set(items.values())) == 1 and items["ours"] > 0, items  # the same data for everyone
        assert entry["same_data"]["equal"]
        assert set(run["ours"]["rows_by_table"]) >= set(LIST_RESOURCES) - {"enrollments"}
        for result in run.values():
            assert result["seconds"] > 0 and result["peak_rss_mb"] > 0
            assert result["rows_per_second"] == pytest.approx(result["items"] / result["seconds"])
        ours, floor = run["ours"], run["floor"]
        assert entry["ratios"]["ours_over_floor"]["median"] == pytest.approx(
            ours["seconds"] / floor["seconds"]
        )
        assert entry["contenders"]["ours"]["median"]["seconds"] == ours["seconds"]
        # without Arrow pages: the same tables and rows, at its own speed
        assert run["ours_rows"]["rows_by_table"] == ours["rows_by_table"]
        assert entry["ratios"]["ours_rows_over_ours"]["median"] == pytest.approx(
            run["ours_rows"]["seconds"] / ours["seconds"]
        )
    small, large = figures["throughput"]
    assert "models" not in small
    models = large["models"]
    assert models["models"]["ok"], models
    assert models["models"]["runs"] == 1 and models["models"]["nodes"] > 0
    assert models["topup"]["rows_by_table"].get("sales", 0) > 0


def test_tolerance_figures_compare_the_same_records_exact_and_drifting(bench_run: tuple[Path, dict]) -> None:
    _, figures = bench_run
    tolerance = figures["tolerance"]
    assert tolerance["target_rows"] == 500 and tolerance["drift"] == 0.03
    assert tolerance["recording_drifting"]["pages"] == tolerance["recording_exact"]["pages"] > 0
    (run,) = tolerance["runs"]
    assert run["drifting"]["items"] == run["exact"]["items"] > 0  # every drifting record loads
    assert tolerance["departed_records"] > 0
    assert tolerance["ratios"]["drifting_over_exact"]["median"] == pytest.approx(
        run["drifting"]["seconds"] / run["exact"]["seconds"]
    )


def test_rate_limit_figures_come_from_the_sandbox(bench_run: tuple[Path, dict]) -> None:
    _, figures = bench_run
    limits = figures["rate_limits"]
    (run,) = limits["runs"]
    bound = run["bound"]
    assert bound["operation"] in run["full"]["requests_by_operation"]
    assert bound["requests"] == run["full"]["requests_by_operation"][bound["operation"]]
    assert bound["seconds"] == pytest.approx(
        bound["requests"] / bound["limit_per_window"] * bound["window_seconds"]
    )
    assert run["full"]["requests"] == sum(run["full"]["requests_by_operation"].values()) > 0
    assert 0 < run["incremental"]["requests"]
    assert run["incremental_request_share"] == pytest.approx(
        run["incremental"]["requests"] / run["full"]["requests"]
    )
    assert (
        limits["median"]["rate_limited"] == run["full"]["rate_limited"] + run["incremental"]["rate_limited"]
    )
    # the first run reads everything; the incremental one fewer, its full scans as the budget allows
    assert run["full"]["not_due"] == []
    assert set(run["incremental"]["not_due"]) <= set(FULL_SCANS)
    assert run["incremental"]["requests"] < run["full"]["requests"]


def test_report_states_the_time_scale_used(bench_run: tuple[Path, dict]) -> None:
    out, figures = bench_run
    text = (out / "report.md").read_text()
    limits = figures["rate_limits"]
    time_scale, limit = limits["time_scale"], limits["runs"][0]["bound"]["limit_per_window"]
    window = 60 / time_scale
    assert f"time scale {time_scale:g} ({limit} requests a minute become {limit} per {window:g} s)" in text
    assert f"grow {time_scale:g} times" in text
