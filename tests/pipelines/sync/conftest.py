"""Fixtures for the PostgreSQL destination: one throwaway server per test session (per xdist worker;
the tests share an xdist group, so one worker runs them all and starts it once)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres.server import PostgresServer, running_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server
