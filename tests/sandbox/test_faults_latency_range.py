"""`latency_max_ms` (contracts part 2): each answer waits a seeded, uniform time between `latency_ms` and
`latency_max_ms`, drawn apart from the other faults (bench/shapes.py: 80-200 ms a request)."""

from __future__ import annotations

import pytest

from sandbox.faults import FaultInjector, FaultSpec


def latencies(spec: str, requests: int = 400) -> list[float]:
    injector = FaultInjector(FaultSpec.parse(spec))
    return [injector.next().latency for _ in range(requests)]


def test_the_range_is_drawn_uniformly_between_its_ends_and_seeded():
    drawn = latencies("latency_ms=80,latency_max_ms=200,seed=5")
    assert all(0.080 <= latency <= 0.200 for latency in drawn)
    assert min(drawn) < 0.09 and max(drawn) > 0.19
    assert sum(drawn) / len(drawn) == pytest.approx(0.140, abs=0.01)
    assert drawn == latencies("latency_ms=80,latency_max_ms=200,seed=5")
    assert drawn != latencies("latency_ms=80,latency_max_ms=200,seed=6")


def test_without_a_range_the_latency_is_fixed():
    assert set(latencies("latency_ms=150", 20)) == {0.150}
    assert set(latencies("latency_ms=150,latency_max_ms=150", 20)) == {0.150}


def test_the_range_does_not_move_the_other_faults():
    def kinds(spec: str) -> list[tuple[str | None, bool]]:
        injector = FaultInjector(FaultSpec.parse(spec))
        return [(fault.kind, fault.foreign) for fault in (injector.next() for _ in range(300))]

    plain = kinds("error=0.1,drop=0.05,foreign_429=0.05,seed=9")
    assert kinds("error=0.1,drop=0.05,foreign_429=0.05,latency_ms=80,latency_max_ms=200,seed=9") == plain


def test_a_range_below_its_floor_is_refused_and_the_spec_formats_back():
    with pytest.raises(ValueError, match="latency_max_ms"):
        FaultSpec.parse("latency_ms=200,latency_max_ms=80")
    with pytest.raises(ValueError, match="invalid value"):
        FaultSpec.parse("latency_max_ms=-1")
    spec = FaultSpec.parse("latency_ms=80,latency_max_ms=200,error=0.03")
    assert FaultSpec.parse(spec.format()) == spec
