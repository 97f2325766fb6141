"""What each test costs in CPU, and which xdist groups cost the most (issue 46: the suite is bound by CPU).

A test's CPU is that of its worker's whole process tree over its setup, call and teardown: the worker's
own threads (the sandbox on loopback, the sync's pools), its live subprocesses and what the reaped ones
left in their parents (`children_user`/`children_system`), so a forked command or a `dbt build` counts
where it ran. A session- or module-scoped fixture counts for the first test that asked for it. Processes
that leave the tree (a daemon such as PostgreSQL's server) are not counted.

At the end of the session the summary prints the groups (an xdist group, else the test's module) and the
tests that cost the most, with the CPU measured in all. `PLATFORM_SYNC_TEST_CPU=path` also writes every
test's CPU and wall seconds to that file (tab-separated), for comparing two runs.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Generator

import psutil
import pytest

_RECORDS_KEY = "platform_sync_cpu_meter"
_records: dict[str, tuple[float, float]] = {}


def _tree_cpu(root: psutil.Process) -> float:
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:  # ended between the listing and the reading
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    root = psutil.Process()
    cpu, wall = _tree_cpu(root), time.monotonic()
    yield
    _records[item.nodeid] = (_tree_cpu(root) - cpu, time.monotonic() - wall)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints
        workeroutput[_RECORDS_KEY] = json.dumps(_records)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    output = getattr(node, "workeroutput", None) or {}
    _records.update({k: tuple(v) for k, v in json.loads(output.get(_RECORDS_KEY, "{}")).items()})


def group_of(nodeid: str) -> str:
    """The xdist group of a test (`path::name@group`), else its module."""
    _, at, group = nodeid.rpartition("@")
    return group if at and "/" not in group else nodeid.split("::")[0]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if getattr(config, "workeroutput", None) is not None or not _records:
        return
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for nodeid, (cpu, wall) in _records.items():
        entry = groups[group_of(nodeid)]
        entry[0] += cpu
        entry[1] += wall
        entry[2] += 1
    total = sum(cpu for cpu, _ in _records.values())
    write = terminalreporter.write_line
    terminalreporter.section("CPU by group (the worker's process tree, setup to teardown)")
    for name, (cpu, wall, count) in sorted(groups.items(), key=lambda g: -g[1][0])[:20]:
        write(f"{cpu:8.1f} s CPU {wall:8.1f} s wall {int(count):5d} tests  {name}")
    write(f"{total:8.1f} s CPU measured in {len(_records)} tests")
    terminalreporter.section("the 15 tests costing the most CPU")
    for nodeid, (cpu, wall) in sorted(_records.items(), key=lambda r: -r[1][0])[:15]:
        write(f"{cpu:8.1f} s CPU {wall:8.1f} s wall  {nodeid}")
    path = os.environ.get("PLATFORM_SYNC_TEST_CPU")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            for nodeid, (cpu, wall) in sorted(_records.items()):
                out.write(f"{nodeid}\t{cpu:.3f}\t{wall:.3f}\n")
