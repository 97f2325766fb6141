"""Stable, fast randomness: every record draws from a generator keyed by (seed, entity, index).

Python's `hash()` is salted per process and `random.Random(int)` costs ~6 µs to seed, so records use a
splitmix64 key (stable across processes and versions) and a 64-bit LCG for the few draws that follow.
Quality is ample for synthetic data; what matters is that the same key always yields the same draws.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence
from typing import Generic, TypeVar

T = TypeVar("T")

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
UNIT = 2.0**-53


def mix64(z: int) -> int:
    """splitmix64 finaliser: a bijection on 64-bit ints that scatters neighbouring inputs."""
    z = (z + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def entity_key(seed: int, entity: str) -> int:
    """A 64-bit key for one kind of record in one world (blake2b: stable, unlike `hash()`)."""
    digest = hashlib.blake2b(f"{seed}|{entity}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def record_key(ekey: int, index: int) -> int:
    return mix64(ekey ^ (index & MASK))


def step(h: int) -> int:
    """A cheap next 64-bit value from a well-mixed one (LCG step plus a fold of the high bits)."""
    h = (h * 6364136223846793005 + 1442695040888963407) & MASK
    return h ^ (h >> 29)


def unit_hash(ekey: int, index: int) -> float:
    """One uniform draw in [0, 1) for (entity, index) without building a generator."""
    return (mix64(ekey ^ index) >> 11) * UNIT


class Rng:
    """A tiny 64-bit LCG seeded from a record key; only the top 53 bits of each step are used."""

    __slots__ = ("s",)

    def __init__(self, key: int):
        self.s = key

    def r(self) -> float:
        self.s = s = (self.s * 6364136223846793005 + 1442695040888963407) & MASK
        return (s >> 11) * UNIT

    def below(self, n: int) -> int:
        return int(self.r() * n)

    def between(self, lo: int, hi: int) -> int:
        """Uniform int in [lo, hi]."""
        return lo + int(self.r() * (hi - lo + 1))

    def chance(self, p: float) -> bool:
        return self.r() < p

    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.r() * len(seq))]

    def token(self, length: int, alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> str:
        n = len(alphabet)
        return "".join(alphabet[int(self.r() * n)] for _ in range(length))

    def uuid(self) -> str:
        """A version-4-shaped UUID from two draws (deterministic, unlike `uuid.uuid4`)."""
        hi = (self.s * 6364136223846793005 + 1) & MASK
        lo = mix64(hi)
        self.s = lo
        h = f"{hi:016x}{lo:016x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:32]}"


class Weighted(Generic[T]):
    """A categorical distribution: `draw(u)` maps a uniform draw to a value by cumulative weight."""

    __slots__ = ("cum", "table", "total", "values")

    def __init__(self, pairs: Sequence[tuple[T, float]]):
        self.values = [v for v, _ in pairs]
        acc = 0.0
        self.cum: list[float] = []
        for _, w in pairs:
            acc += w
            self.cum.append(acc)
        self.total = acc
        # 1024-entry lookup table for the hot paths that draw from bit fields (`table[h & 1023]`)
        self.table = tuple(self.draw((n + 0.5) / 1024) for n in range(1024))

    def draw(self, u: float) -> T:
        return self.values[min(bisect_right(self.cum, u * self.total), len(self.values) - 1)]


class Stream:
    """Creation times of an open-ended series of records, monotone in the index.

    `count0` records fall in [start, end) (one slot each, jittered inside its slot); records keep
    arriving at the same rate after `end`. So a time range maps to an index range by arithmetic.
    """

    __slots__ = ("count0", "end", "jkey", "span", "start")

    def __init__(self, seed: int, entity: str, start: int, end: int, count0: int):
        self.start = start
        self.end = end
        self.span = end - start
        self.count0 = max(1, count0)
        self.jkey = entity_key(seed, entity + ".jitter")

    def base(self, i: int) -> int:
        return self.start + i * self.span // self.count0

    def created(self, i: int) -> int:
        b = self.start + i * self.span // self.count0
        slot = self.start + (i + 1) * self.span // self.count0 - b
        return b + mix64(self.jkey ^ i) % max(1, slot)

    def slot_of(self, t: int) -> int:
        """The largest index whose slot starts at or before t (-1 before the first)."""
        if t < self.start:
            return -1
        return ((t - self.start + 1) * self.count0 - 1) // self.span

    def count_at(self, t: int) -> int:
        """How many records exist at time t (created <= t)."""
        i = self.slot_of(t)
        if i < 0:
            return 0
        return i + 1 if self.created(i) <= t else i

    def first_at_or_after(self, t: int) -> int:
        i = self.slot_of(t)
        if i < 0:
            return 0
        return i if self.created(i) >= t else i + 1
