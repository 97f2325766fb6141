"""The fault matrix (issue 15): the clean sync of one small world (`reference`, per test worker) and a
sandbox of that world (`sandbox`: it overrides, in this folder, the e2e world's of ../conftest.py). The
helpers: tests/support/faults.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.running import SandboxHandle
from tests.support.faults import Reference, database_of, pipeline_in, run, world


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    folder = tmp_path_factory.mktemp("reference")
    pipeline = pipeline_in(folder)
    with world() as handle:
        result = run(pipeline, handle)
    assert result.report.failed == {} and result.report.skipped == {} and not result.is_partial
    return Reference(database_of(pipeline), dict(result.requests))


@pytest.fixture
def sandbox() -> Iterator[SandboxHandle]:
    with world() as handle:
        yield handle
