"""The keys a complete scan saw, kept small: a scan of a resource whose deletions are marked
(`pipelines/sync/deletions.py`) must remember every record's key until the load is done.

A set of tuples of strings costs about 150 bytes a record (the tuple, the string, the set's slot): at a
million records read whole, 150 MB held through normalize and load, growing with the seller's data. Each
key is kept as the 64-bit hash of its text instead (8 bytes in an array), and looked up once, after the
load. The hash is Python's own (`hash` of the tuple of strings), valid within the process that read the
scan, which is the one that marks the deletions. A record deleted on the platform goes unmarked only when
its key's hash equals that of a key the scan saw: about one chance in 10^13 per deleted record at a
million keys; the next complete scan marks it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable


class SeenKeys:
    """The keys (tuples of their columns' values as text) of the records a scan saw."""

    def __init__(self, keys: Iterable[tuple[str, ...]] = ()) -> None:
        self._hashes = array("q")
        self.extend(keys)

    def extend(self, keys: Iterable[tuple[str, ...]]) -> None:
        self._hashes.extend(hash(key) for key in keys)

    def __len__(self) -> int:
        return len(self._hashes)

    def lookup(self) -> frozenset[int]:
        """For `seen(...)`: built once, when the deletions are marked (after the load)."""
        return frozenset(self._hashes)


def seen(lookup: frozenset[int], key: tuple[str, ...]) -> bool:
    """Whether the scan saw `key` (its values as text), by `SeenKeys.lookup`."""
    return hash(key) in lookup
