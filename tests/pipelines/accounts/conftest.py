"""Three sandbox worlds as three accounts of one project folder (the helpers: tests/support/accounts.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from sandbox.running import running_sandbox
from tests.support.accounts import SCALE, SEEDS, TIME_SCALE, World


@pytest.fixture(scope="module")
def worlds() -> Iterator[dict[str, World]]:
    with contextlib.ExitStack() as stack:
        handles = {
            name: stack.enter_context(running_sandbox(seed=seed, scale=SCALE, time_scale=TIME_SCALE))
            for name, seed in SEEDS.items()
        }
        yield {name: World(name, handle, handle.token()) for name, handle in handles.items()}
