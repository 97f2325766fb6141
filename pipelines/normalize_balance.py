"""Hand dlt's normalize workers equal shares of the work, not equal numbers of files.

dlt splits an extract's files between its normalize workers by name (sorted, in equal counts), keeping a
table's files together. Two tables dominate our normalize step (subscriptions and event attendees, the
lists with child tables, normalized row by row); on exact pages the name split puts them in different
workers. One more file moves the split: a run whose records departed from the spec writes
`_platform_departures`, which sorts first, and both tables then fell to one worker while the other
idled, and the step took longer (bench/README.md). The same happens to any selection of
resources that changes the number of files.

So the files are grouped by table as dlt groups them, and the groups are dealt largest first to the
worker with the least work so far. A table's work is the size of its row files (JSON lines, which dlt
normalizes row by row); parquet files count as none, because dlt imports them as they are (their
schema is the table's: `fastpath/columnar.py`). Installed once per process over dlt 1.31's
`Normalize.map_parallel` and `group_worker_files`, where dlt has them in the shape this wraps (a dlt
that does not keeps its own split).
"""

from __future__ import annotations

import contextvars
import inspect
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dlt.common.storages.load_package import ParsedLoadJobFileName
from dlt.normalize import normalize as dlt_normalize

# The sizes of the files of the `map_parallel` call running in this thread.
_SIZES: contextvars.ContextVar[Mapping[str, int] | None] = contextvars.ContextVar("sizes", default=None)
_IMPORTED_AS_IS = ("parquet",)
_installed = threading.Lock()
_INSTALLED: list[bool] = []


def balanced_groups(files: Sequence[str], groups: int, work_of: Callable[[str], int]) -> list[list[str]]:
    """The files in at most `groups` groups, a table's files in one group, the tables dealt largest
    first to the group with the least work so far (ties: the fewest files)."""
    by_table: dict[str, list[str]] = {}
    for file in sorted(files):
        by_table.setdefault(ParsedLoadJobFileName.parse(os.path.basename(file)).table_name, []).append(file)
    tables = sorted(
        ((sum(work_of(f) for f in table), table) for table in by_table.values()),
        key=lambda weighed: (-weighed[0], weighed[1][0]),
    )
    dealt: list[list[str]] = [[] for _ in range(max(1, min(groups, len(tables))))]
    work = [0] * len(dealt)
    for table_work, table in tables:
        index = min(range(len(dealt)), key=lambda i: (work[i], len(dealt[i]), i))
        dealt[index].extend(table)
        work[index] += table_work
    return [group for group in dealt if group]


def work_of_file(size: int, file: str) -> int:
    """A file's normalizing work: its size, none for a file dlt imports as it is."""
    file_format = ParsedLoadJobFileName.parse(os.path.basename(file)).file_format
    return 0 if file_format in _IMPORTED_AS_IS else size


def _dlt_splits_as_wrapped() -> bool:
    split = getattr(dlt_normalize, "group_worker_files", None)
    map_parallel = getattr(dlt_normalize.Normalize, "map_parallel", None)
    if not callable(split) or not callable(map_parallel):
        return False
    return list(inspect.signature(map_parallel).parameters) == ["self", "schema", "load_id", "files"]


def balance_normalize_workers() -> None:
    """Install the balanced split over dlt's (see the module's docstring); once per process."""
    with _installed:
        if _INSTALLED or not _dlt_splits_as_wrapped():
            return
        _INSTALLED.append(True)
    dlt_split = dlt_normalize.group_worker_files
    dlt_map_parallel = dlt_normalize.Normalize.map_parallel

    def group_worker_files(files: Sequence[str], no_groups: int) -> list[Sequence[str]]:
        sizes = _SIZES.get()
        if sizes is None:
            return dlt_split(files, no_groups)
        return list(balanced_groups(files, no_groups, lambda f: work_of_file(sizes.get(f, 0), f)))

    def map_parallel(self: Any, schema: Any, load_id: str, files: Sequence[str]) -> Any:
        storage = self.normalize_storage.extracted_packages.storage
        sizes = {}
        for file in files:
            try:
                sizes[file] = os.path.getsize(storage.make_full_path(file))
            except OSError:  # not found here: counted as no work; dlt reports the file itself
                sizes[file] = 0
        token = _SIZES.set(sizes)
        try:
            return dlt_map_parallel(self, schema, load_id, files)
        finally:
            _SIZES.reset(token)

    # dlt's own names, replaced (typed loosely: mypy does not let a module's function or a method be set)
    module: Any = dlt_normalize
    module.group_worker_files = group_worker_files
    module.Normalize.map_parallel = map_parallel
