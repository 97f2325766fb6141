"""The world shapes of `bench/shapes.py` (issue 45) without a sync: each shape's world has the parents,
windows and ids it is named for, dlt's `rest_api` is planned over the same reads, and the figures, the
summary and the markdown come out of a sandbox's stats. No timing is asserted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench import shapes, shapes_report
from bench.shape_worlds import SHAPES, ShapedWorld, fan_500
from sandbox.world import SyntheticWorld
from sources.platform.settings import parse_start_date
from sources.platform_client.windows import date_windows

NOW = datetime(2026, 12, 8, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def worlds() -> dict[str, ShapedWorld]:
    return {name: shape.world(45) for name, shape in SHAPES.items()}


def test_a_shaped_world_has_every_part_of_a_synthetic_world() -> None:
    assert set(vars(fan_500(45, 300))) == set(vars(SyntheticWorld(45, 300))) | {"parts"}


def test_each_shape_is_as_large_as_it_is_named(worlds: dict[str, ShapedWorld]) -> None:
    small, deep, fan = worlds["small_lists"], worlds["deep_lists"], worlds["fan_500"]
    assert small.events_.count_at(small.now) == 202 and len(small.catalog()["events"]) == 202
    assert [len(students) for students in small.schools.students] == [150, 150]
    assert deep.transfers_.stream.count_at(deep.now) == 30_000
    assert deep.courses.stream.count_at(deep.now) == 40_000
    assert len(fan.catalog()["products"]) == 500
    assert all(len(world.catalog_.products) < 30 for name, world in worlds.items() if name != "fan_500")


def test_the_windows_and_the_ids_are_in_the_settings(worlds: dict[str, ShapedWorld]) -> None:
    windows = SHAPES["windows_100"].settings(worlds["windows_100"], NOW.date())
    start = parse_start_date(windows["start_date"], NOW)
    assert len(list(date_windows(start, NOW, windows["subscriptions_window_days"]))) == 100
    ids = SHAPES["ids_5000"].settings(worlds["ids_5000"], NOW.date())
    assert len(set(ids["sale_ids"])) == 5000 == ids["sales_max_requests"]
    assert SHAPES["fan_500"].settings(worlds["fan_500"], NOW.date())["sales_max_requests"] == 1


def test_rest_api_is_planned_over_the_same_reads(worlds: dict[str, ShapedWorld]) -> None:
    from bench.shapes_rest_api import plan

    def planned(name: str) -> dict:
        shape = SHAPES[name]
        return plan(shape, worlds[name].catalog(), shape.settings(worlds[name], NOW.date()), NOW)

    small = planned("small_lists")
    assert len(small["listings"]) == 202 + 300 and len(small["ids"]["event_ids"]) == 202
    assert [c["path"] for c in planned("fan_500")["children"]] == [
        "store/v1/products/{resources.products.id}/campaigns",
        "store/v1/products/{resources.products.id}/partners",
    ]
    windows = planned("windows_100")["listings"]
    assert [w["operation"] for w in windows].count("list_subscriptions") == 100
    assert len(planned("ids_5000")["ids"]["sale_ids"]) == 5000


def test_figures_summary_and_markdown_from_stats() -> None:
    stats = {
        "operations": {"sale_details": {"200": 290, "503": 10}, "list_transfers": {"200": 300}},
        "timeline": {
            "sale_details": {"first": 1.0, "last": 13.0, "requests": 300},
            "list_transfers": {"first": 0.5, "last": 5.75, "requests": 300},
        },
    }
    focus = {"sale_details": "ids", "list_transfers": "paged lists"}
    operations = shapes.figures(stats, 60.0, focus)
    details, transfers = operations["sale_details"], operations["list_transfers"]
    assert details["bound"] == pytest.approx(9.67) and details["of_bound"] == pytest.approx(1.241)
    assert details["allowed_in_flight"] == pytest.approx(4.2) and transfers["in_flight"] == pytest.approx(8.0)
    run = {"stopped": False, "seconds": 20.0, "exit_status": 0, "operations": operations}
    run["load_average"] = {"before": [1.0, 1.0, 1.0], "after": [1.2, 1.0, 1.0]}
    result = {"shape": "ids_5000", "time_scale": 60.0, "sampled": False, "runs": {"ours": run}}
    found = shapes_report.summary([result])["ours"]
    assert found["kinds"]["paged lists"]["worst_in_flight"]["figure"] == pytest.approx(8.0)
    assert found["in_flight_target_met"] is True and found["details_target_met"] is False
    text = shapes_report.markdown({"summary": {"ours": found}, "results": [result]})
    assert "| ids_5000 | 60 | `sale_details` (ids) | ours | 300 |" in text and "NOT met" in text
