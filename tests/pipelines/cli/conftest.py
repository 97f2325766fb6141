"""The sandbox of the fault matrix's small world (tests/support/faults.py), for the real command's failure
messages (test_failure_messages.py; it was tests/faults/conftest.py's `sandbox`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.running import SandboxHandle
from tests.support.faults import world


@pytest.fixture
def sandbox() -> Iterator[SandboxHandle]:
    with world() as handle:
        yield handle
