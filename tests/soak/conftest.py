"""The soak test's marker: `pytest -m soak` selects it, `-m "not soak"` leaves it out."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "soak: many simulated days of scheduled syncs (a minute or two)")
