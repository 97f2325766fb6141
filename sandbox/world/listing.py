"""Listings: a filtered, ordered result whose pages are built on demand (the `Listing` Protocol)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar, cast

from .api import Record

K = TypeVar("K")
V = TypeVar("V")


def _window(total: int, offset: int, limit: int) -> range:
    start = min(max(0, offset), total)
    return range(start, min(total, start + max(0, limit)))


class RangeListing:
    """Records `build(start + k * step)` for k in [0, count): no index list is ever held."""

    def __init__(self, start: int, count: int, build: Callable[[int], Record], step: int = 1):
        self.start = start
        self.count = max(0, count)
        self.step = step
        self.build = build

    def __len__(self) -> int:
        return self.count

    def page(self, offset: int, limit: int) -> list[Record]:
        b, s, st = self.build, self.start, self.step
        return [b(s + k * st) for k in _window(self.count, offset, limit)]


class KeyListing(Generic[K]):
    """Records built from a precomputed key sequence (indices after a scan, or small cached keys)."""

    def __init__(self, keys: Sequence[K], build: Callable[[K], Record]):
        self.keys = keys
        self.build = build

    def __len__(self) -> int:
        return len(self.keys)

    def page(self, offset: int, limit: int) -> list[Record]:
        keys, b = self.keys, self.build
        return [b(keys[k]) for k in _window(len(keys), offset, limit)]


class RecordListing:
    """Records already built (small sets: products, affiliations, community members)."""

    def __init__(self, records: Sequence[Record]):
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def page(self, offset: int, limit: int) -> list[Record]:
        w = _window(len(self.records), offset, limit)
        return list(self.records[w.start : w.stop])


class ScanCache:
    """A small LRU of scan results keyed by (query, clock): paging a scanned listing scans once."""

    def __init__(self, size: int = 32):
        self.size = size
        self._items: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        if key in self._items:
            self._items.move_to_end(key)
            return cast(V, self._items[key])
        value = compute()
        self._items[key] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        self._items.clear()
