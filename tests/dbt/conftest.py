from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: syncs the sandbox and runs the models on it (slower; select with -m e2e)"
    )
