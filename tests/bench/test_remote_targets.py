"""The remote section's figures (bench/remote.py) from stats of the sandbox's shape: the pairs' median and
spread, the sale details' bounds from their first request, and the targets judged on them; no run."""

from __future__ import annotations

from typing import Any

import pytest

from bench import remote


def _pair(
    added: float, server: float | None = 9.0, share: float = 0.1, wall: float | None = 20.0
) -> dict[str, Any]:
    """A pair of 100 requests at 150 ms whose requests' phase took `added` seconds more with latency."""
    return {
        "requests": 100,
        "phase_added": added,
        "in_flight": wall,
        "server_in_flight": server,
        "added_share": share,
    }


def _figures(pairs: list[dict[str, Any]], full_share: float = 0.2) -> dict[str, Any]:
    return {
        "latency": {
            "latency_ms": 150.0,
            "ours_lists": remote.paired(pairs, 0.15),
            "ours_full": {"added_share": full_share},
        }
    }


def test_pairs_give_the_median_added_time_and_the_formula_on_it() -> None:
    lists = remote.paired([_pair(1.5, 11.0), _pair(-0.4, 10.0, wall=None), _pair(1.0, 12.5, 0.3, 40.0)], 0.15)
    assert lists["phase_added_median"] == 1.0  # the negative pair ranks lowest
    assert lists["phase_added_spread"] == [-0.4, 1.5]
    assert lists["phase_in_flight_median"] == pytest.approx(15.0)
    assert lists["phase_added_allowed"] == pytest.approx(100 * 0.15 / 8)
    assert lists["in_flight_median"] == 30.0 and lists["in_flight_not_positive"] == 1
    assert lists["server_in_flight_median"] == 11.0
    assert lists["added_share_median"] == 0.1
    hidden = remote.paired([_pair(-0.2), _pair(0.0), _pair(3.0)], 0.15)
    assert hidden["phase_added_median"] == 0.0 and hidden["phase_in_flight_median"] is None


def test_phase_is_first_request_to_last_answer() -> None:
    def run(first: float, last: float) -> dict[str, Any]:
        timeline = {"a": {"first": first, "last": first + 1.0}, "b": {"first": first + 0.5, "last": last}}
        return {"seconds": 10.0, "requests": 100, "timeline": timeline}

    pair = remote.hidden(run(2.0, 4.0), run(2.5, 5.5), 0.15)
    assert (pair["phase_without"], pair["phase_with"], pair["phase_added"]) == (2.0, 3.0, 1.0)
    assert pair["phase_in_flight"] == pytest.approx(15.0)
    assert pair["in_flight"] is None  # the wall times were equal
    assert remote.hidden(run(2.0, 4.0), run(2.0, 3.5), 0.15)["phase_in_flight"] is None


def test_in_flight_target_is_judged_on_the_median_added_time() -> None:
    met = remote.targets(_figures([_pair(1.5), _pair(1.0), _pair(-2.0)]))[0]
    assert met["met"] is True and met["value"] == pytest.approx(15.0)
    assert met["text"] == (
        "paged lists, 150 ms a request: 8+ requests in flight (requests x latency / added time of the "
        "requests' phase: 15.0, median added 1.00 s of 3 pairs, spread -2.00 s-1.50 s, at most 1.88 s "
        "allowed; by the wall time 20.0; at the sandbox 9.0)"
    )
    # 100 x 0.15 s / 8 = 1.875 s: a median added time above it is fewer than 8 in flight.
    missed = remote.targets(_figures([_pair(1.9), _pair(2.5), _pair(-5.0)]))[0]
    assert missed["met"] is False and missed["value"] == pytest.approx(15 / 1.9)
    # No added time at all (the median not positive): latency hidden, met; the formula has no figure.
    hidden = remote.targets(_figures([_pair(-0.1), _pair(0.0), _pair(2.0)]))[0]
    assert hidden["met"] is True and hidden["value"] is None


def test_full_sync_share_target() -> None:
    assert remote.targets(_figures([_pair(1.0)], full_share=0.24))[1]["met"] is True
    assert remote.targets(_figures([_pair(1.0)], full_share=0.25))[1]["met"] is False


def _stats(served: int, rate_limited: int, first: float, last: float) -> dict[str, Any]:
    counts = {"200": served - 1, "404": 1, "429": rate_limited}
    return {
        "operations": {"sale_details": counts, "list_sales": {"200": 3}},
        "timeline": {"sale_details": {"first": first, "last": last, "requests": served + rate_limited}},
    }


def test_sale_detail_bounds_count_from_their_first_request() -> None:
    # 83 served at 30 per 30 s window (time scale 2): 30 at once, 30 at 30 s, 23 at 60 s.
    details = remote.detail_bounds(_stats(83, 5, 4.0, 67.0), 2.0, "sale_details")
    assert details["served"] == 83 and details["rate_limited"] == 5
    assert details["seconds"] == 63.0
    assert details["bounds"] == {"window": 60.0, "bucket": 53.0, "nominal": 83.0}
    assert details["over"]["window"] == pytest.approx(1.05)
    assert details["over"]["bucket"] == pytest.approx(63.0 / 53.0)
    # Exactly one window's worth needs no wait at all.
    assert remote.detail_bounds(_stats(30, 0, 1.0, 1.5), 2.0, "sale_details")["bounds"]["window"] == 0.0
    assert remote.detail_bounds(_stats(31, 0, 1.0, 31.5), 2.0, "sale_details")["bounds"]["window"] == 30.0


def test_foreign_targets_are_the_sale_details_and_the_whole_run() -> None:
    def figures(details: float, whole: float) -> dict[str, Any]:
        over = {"window": details, "bucket": 9.0, "nominal": 0.5}
        return {"foreign": {"with": {"details": {"over": over}, "over_whole_bound": whole}}}

    assert [t["met"] for t in remote.targets(figures(1.10, 1.05))] == [True, True]
    assert [t["met"] for t in remote.targets(figures(1.11, 1.05))] == [False, True]
    assert [t["met"] for t in remote.targets(figures(1.02, 1.44))] == [True, False]


def test_report_shows_the_pairs_and_the_sale_details_bounds() -> None:
    from bench.remote_report import markdown

    row = {
        "phase_without": 2.0,
        "phase_with": 2.9,
        "phase_added": 0.9,
        "phase_in_flight": 100 * 0.15 / 0.9,
        "seconds_without": 8.0,
        "seconds_with": 9.5,
        "added_seconds": 1.5,
        "added_share": 1.5 / 8.0,
        "requests": 100,
        "in_flight": 10.0,
        "server_in_flight": 11.0,
        "server_busy_seconds": 1.4,
    }
    details = remote.detail_bounds(_stats(83, 5, 4.0, 67.0), 2.0, "sale_details")
    run = {"seconds": 75.0, "details": details, "whole_bound": 70.0, "over_whole_bound": 75.0 / 70.0}
    figures: dict[str, Any] = {
        "generated_at": "2026-11-26T15:00:00+00:00",
        "command": "python -m bench.remote",
        "latency": {
            "latency_ms": 150.0,
            "time_scale": 20.0,
            "world_scale": 300,
            "lists_scale": 10000,
            "ours_lists": remote.paired([row, row], 0.15),
            "rest_api_lists": row,
            "ours_full": row,
        },
        "foreign": {"share": 0.02, "world_scale": 150, "time_scale": 2.0, "without": run, "with": run},
        "load_average": {"start": [1.0, 1.0, 1.0], "end": [2.0, 2.0, 2.0]},
    }
    figures["targets"] = remote.targets(figures)
    report = markdown(figures)
    assert (
        "| our sync, paged lists, pair 2 | 8.00 s | 9.50 s | 1.50 s | 19% | 100 | 10.0 | 11.0 (1.4 s) |"
        in (report)
    )
    assert "| with | 75.0 s | 83 (5) | 4.0 s, 67.0 s | 63.0 s | 60.0 s | x1.050 | 53.0 s | x1.189 |" in report
    assert "with 75.0 s of 70.0 s, x1.071." in report
    assert "- met: 429s from another client (1 in 50): the sale details within 1.10x" in report
