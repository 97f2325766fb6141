"""Memory freed by extract and normalize goes back to the system when the normalize and load steps start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from dlt.common.runtime.collector import LogCollector

from pipelines.sync import memory
from pipelines.sync.platform_pipeline import make_pipeline


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    monkeypatch.chdir(tmp_path)
    calls: list[str] = []
    monkeypatch.setattr(memory, "release_freed_memory", lambda: calls.append("released"))
    return calls


def test_memory_is_released_when_the_normalize_and_load_steps_start(
    tmp_path: Path, releases: list[str]
) -> None:
    pipeline = make_pipeline(pipelines_dir=tmp_path / "pipelines")
    pipeline.extract([{"a": 1}], table_name="t")
    assert releases == []
    pipeline.normalize()
    assert releases == ["released"]
    pipeline.load()
    assert releases == ["released"] * 2
    pipeline.run([{"a": 2}], table_name="t")
    assert releases == ["released"] * 4


def test_the_progress_display_asked_for_still_reports(
    tmp_path: Path, releases: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = make_pipeline(pipelines_dir=tmp_path / "pipelines", progress=True)
    # the display asked for, with the release mixed in (no method of dlt's called or replaced)
    assert isinstance(pipeline.collector, memory.ReleaseMemoryBetweenSteps)
    assert isinstance(pipeline.collector, LogCollector)
    pipeline.run([{"a": 1}, {"a": 2}], table_name="t")
    err = capsys.readouterr().err
    assert "Jobs" in err and "t: 2" in err
    assert releases == ["released"] * 2


# 40 MB in blocks of 4 kB from the C allocator, touched, then freed: a block allocated after them keeps
# the heap's top in use, so free() alone cannot give the pages back; only a release (malloc_trim) can.
_FREED_SCRIPT = """
import ctypes, ctypes.util, os, sys
from pipelines.sync import memory
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def resident() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
blocks = [libc.malloc(4000) for _ in range(10_000)]
for block in blocks:
    ctypes.memset(block, 1, 4000)
pin = libc.malloc(4000)
for block in blocks:
    libc.free(block)
before = resident()
if sys.argv[1] == "release":
    memory.release_freed_memory()
print(before - resident())
"""


def _returned_bytes(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _FREED_SCRIPT, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(memory._libc_function("malloc_trim") is None, reason="glibc only")
def test_release_freed_memory_gives_the_c_allocators_free_pages_back() -> None:
    mb = 1 << 20
    assert _returned_bytes("keep") < 4 * mb  # what free() leaves resident stays so without a release
    assert _returned_bytes("release") > 30 * mb  # of the 40 MB freed


# Six threads allocate with the C allocator at once, then glibc prints one block per arena to stderr.
_ARENAS_SCRIPT = """
import ctypes, ctypes.util, sys, threading
from pipelines.sync import memory
if sys.argv[1] == "limited":
    memory.limit_malloc_arenas()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
ready = threading.Barrier(6)
def allocate():
    ready.wait()
    for _ in range(2000):
        libc.malloc(200)
threads = [threading.Thread(target=allocate) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.malloc_stats()
"""


def _arenas(mode: str, env: dict[str, str] | None = None) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _ARENAS_SCRIPT, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


@pytest.mark.skipif(memory._libc_function("mallopt") is None, reason="glibc only")
def test_threads_share_at_most_two_malloc_arenas() -> None:
    environment = {"MALLOC_ARENA_MAX": ""}
    assert _arenas("unlimited", environment) > memory.MALLOC_ARENAS  # what glibc does by itself
    assert _arenas("limited", environment) == memory.MALLOC_ARENAS


@pytest.mark.skipif(memory._libc_function("mallopt") is None, reason="glibc only")
def test_an_arena_count_chosen_by_the_user_is_kept() -> None:
    assert _arenas("limited", {"MALLOC_ARENA_MAX": "4"}) == 4


@pytest.fixture
def arrow_pool():  # type: ignore[no-untyped-def]
    before = pa.default_memory_pool()
    yield
    pa.set_memory_pool(before)


@pytest.mark.usefixtures("arrow_pool")
def test_arrow_allocates_with_the_c_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    memory.use_system_arrow_pool()
    assert pa.default_memory_pool().backend_name == "system"


@pytest.mark.usefixtures("arrow_pool")
def test_an_arrow_pool_chosen_by_the_user_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    memory.use_system_arrow_pool()
    assert pa.default_memory_pool().backend_name == "mimalloc"


def _writer_buffer(*sections: str) -> int:
    from dlt.common.configuration import resolve_configuration
    from dlt.common.data_writers.buffered import BufferedDataWriter

    spec = BufferedDataWriter.BufferedDataWriterConfiguration
    return int(resolve_configuration(spec(), sections=sections).buffer_max_items)


def test_writers_buffer_fewer_rows_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATA_WRITER__BUFFER_MAX_ITEMS", raising=False)
    memory.bound_writer_buffers()
    assert _writer_buffer("normalize", "data_writer") == memory.WRITER_BUFFER_ITEMS
    assert _writer_buffer("extract", "data_writer") == memory.WRITER_BUFFER_ITEMS


def test_a_configured_writer_buffer_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_WRITER__BUFFER_MAX_ITEMS", "250")
    memory.bound_writer_buffers()
    assert _writer_buffer("normalize", "data_writer") == 250
    assert _writer_buffer("extract", "data_writer") == 250
