"""The remote section's in-flight target is judged on the sandbox's measure (bench/remote.py), the
issue's formula shown beside it: a figure from the committed run's shape, no run."""

from __future__ import annotations

from typing import Any

from bench import remote


def _figures(server_in_flight: float | None, formula: float | None) -> dict[str, Any]:
    row = {"server_in_flight": server_in_flight, "in_flight": formula, "added_share": 0.2}
    return {"latency": {"latency_ms": 150.0, "ours_lists": row, "ours_full": row}}


def test_in_flight_target_uses_the_sandbox_measure_and_shows_the_formula() -> None:
    met = remote.targets(_figures(12.4, None))[0]
    assert met["met"] is True and met["value"] == 12.4
    assert met["text"] == (
        "paged lists, 150 ms a request: 8+ requests in flight "
        "(at the sandbox; by requests x latency / added time: n/a)"
    )
    missed = remote.targets(_figures(5.4, 9.0))[0]
    assert missed["met"] is False and missed["value"] == 5.4
    assert missed["text"].endswith("added time: 9.0)")
    assert remote.targets(_figures(None, 9.0))[0]["met"] is False
