"""dlt settings written by syncs in threads of one process (`--all-accounts`) never corrupt dlt's config."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import dlt
import pytest

from pipelines.sync.defaults import set_default, set_value

THREADS = 8
ROUNDS = 20
KEYS = 30


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Threads switch as often as the interpreter allows: without the lock, such writes failed with
    tomlkit's KeyAlreadyPresent or "dictionary changed size during iteration" (a script of the same
    shape, five runs out of five; this test, run once with the lock taken out, failed)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_threads_writing_new_sections_together_all_land(busy_switching: None) -> None:
    errors: list[BaseException] = []

    def write(thread: int, start: threading.Barrier) -> None:
        start.wait()
        try:
            for key in range(KEYS):
                set_value(f"platform_sync_test_writes.s{key}.t{thread}.value", thread)
                set_default(f"platform_sync_test_writes.d{key}.t{thread}.value", thread)
        except BaseException as exc:  # what a thread raised is the test's result
            errors.append(exc)

    for round_ in range(ROUNDS):
        start = threading.Barrier(THREADS)
        threads = [threading.Thread(target=write, args=(round_ * THREADS + n, start)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert errors == []
    for thread in range(ROUNDS * THREADS):
        for key in range(KEYS):
            assert dlt.config.get(f"platform_sync_test_writes.s{key}.t{thread}.value") == thread
            assert dlt.config.get(f"platform_sync_test_writes.d{key}.t{thread}.value") == thread


def test_set_default_keeps_a_value_set_and_set_value_replaces_it() -> None:
    set_value("platform_sync_test_writes.once.value", "a")
    set_default("platform_sync_test_writes.once.value", "b")
    assert dlt.config.get("platform_sync_test_writes.once.value") == "a"
    set_value("platform_sync_test_writes.once.value", "c")
    assert dlt.config.get("platform_sync_test_writes.once.value") == "c"
