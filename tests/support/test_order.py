"""The suite's costliest work first, so that no worker is left alone with a long group at the end
(issue 46).

`make test` runs the suite on 3 workers with `--dist loadgroup`: the tests of one `xdist_group` run on one
worker, one after another, and every other test is a unit of its own. xdist's default order of those
units is by their number of tests, largest first, which puts the groups of a few heavy tests (the accounts,
Airflow, Dagster: minutes of CPU each) after hundreds of cheap ones: they then started last and ran
alone on one core while the other workers had nothing left. Here each worker sorts its collection by what
each unit (a group, else a module) cost in CPU in a measured run (`scope_cpu.tsv`, from the CPU meter's file:
`python -m tests.support.test_order CPU_FILE > tests/support/scope_cpu.tsv`), costliest first
(longest-processing-time-first scheduling), and `make unit` keeps that order (`--no-loadscope-reorder`).
A unit the file does not know costs 0 and keeps its place among the others. Only the order changes: no
test is added, removed or run differently, and a run without xdist keeps pytest's own order.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import pytest

COSTS = Path(__file__).with_name("scope_cpu.tsv")
KEPT_ABOVE = 2.0  # CPU-seconds: cheaper units keep their place


def unit_of(item: pytest.Item) -> str:
    """What the test is sorted with: its xdist group (one worker runs the whole group), else its module
    (xdist spreads a module's tests over the workers as before, but a worker's tests of one module stay
    next to each other, so a module-scoped fixture is still made once per worker, not once per test)."""
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return item.nodeid.split("::")[0]
    return str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))


def read_costs(path: Path = COSTS) -> dict[str, float]:
    costs: dict[str, float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            unit, _, cpu = line.rpartition("\t")
            if unit and not line.startswith("#"):
                costs[unit] = float(cpu)
    return costs


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") or config.getoption("dist", "no") != "loadgroup":
        return
    costs = read_costs()
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(unit_of(item), index)
    place = {id(item): index for index, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[float, int, int]:
        unit = unit_of(item)
        return (-costs.get(unit, 0.0), first[unit], place[id(item)])

    items.sort(key=key)


def units_from_cpu_file(lines: list[str]) -> dict[str, float]:
    """The CPU meter's file (`nodeid[@group]\\tcpu\\twall` per test) summed per unit (`unit_of`)."""
    units: dict[str, float] = defaultdict(float)
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2:
            continue
        nodeid, cpu = parts[0], float(parts[1])
        path_and_name, at, group = nodeid.rpartition("@")
        units[group if at and "/" not in group else nodeid.split("::")[0]] += cpu
    return units


if __name__ == "__main__":
    measured = units_from_cpu_file(Path(sys.argv[1]).read_text().splitlines())
    print(f"# CPU-seconds per scheduling unit, from {Path(sys.argv[1]).name}: tests/support/test_order.py")
    for unit, cpu in sorted(measured.items(), key=lambda kv: -kv[1]):
        if cpu >= KEPT_ABOVE:
            print(f"{unit}\t{cpu:.1f}")
