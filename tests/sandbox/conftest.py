"""Fixtures for the sandbox's HTTP tests: live servers on 127.0.0.1, over a fake or the synthetic world.

Session-scoped sandboxes serve read-only tests (rate limits off so bursts never 429); tests that change
state (faults, clock, rate limits, stock) start their own, which takes milliseconds with the fake world.
The world tests (test_world*.py) share the module-scoped `mid` world fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from sandbox.running import SandboxHandle, running_sandbox
from tests.support.fake_world import FakeWorld
from tests.support.sandbox_api import Api

if TYPE_CHECKING:
    from sandbox.world import SyntheticWorld


@pytest.fixture(scope="session")
def fake_sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(world=FakeWorld(), rate_limits=False) as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def fake_api(fake_sandbox: SandboxHandle) -> Iterator[Api]:
    api = Api(fake_sandbox)
    yield api
    api.close()


@pytest.fixture(scope="session")
def synthetic_sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=1, scale=200, rate_limits=False) as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def synthetic_api(synthetic_sandbox: SandboxHandle) -> Iterator[Api]:
    api = Api(synthetic_sandbox)
    yield api
    api.close()


@pytest.fixture(scope="session", params=["fake", "synthetic"])
def any_api(request: pytest.FixtureRequest) -> Api:
    """The same HTTP-behaviour test against both worlds."""
    api: Api = request.getfixturevalue(f"{request.param}_api")
    return api


@pytest.fixture(scope="module")
def mid() -> SyntheticWorld:
    """A 2000-sale synthetic world, a fresh one per test module (the filter tests call `advance`)."""
    from sandbox.world import SyntheticWorld

    return SyntheticWorld(seed=3, scale=2000)


@pytest.fixture(scope="module")
def mid_records(mid: SyntheticWorld) -> dict[str, list[dict]]:
    from tests.support.world_checks import collect

    return collect(mid)


@pytest.fixture
def own_sandbox() -> Iterator[SandboxHandle]:
    """A fresh fake-world sandbox with rate limits on at a high time scale, for state-changing tests."""
    with running_sandbox(world=FakeWorld(), time_scale=600.0) as sandbox:
        yield sandbox
