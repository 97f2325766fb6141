"""The pseudonyms met in a run, kept so that a person met again is not hashed again (bounded).

People repeat: a buyer in each of their sales and fiscal documents, the client of a fiscal document again
as its destination. A run of a million rows names each person's value about four times, and hashing is
most of what pseudonymisation costs. Each group keeps two generations of at most `CACHE_LIMIT`
pseudonyms (about 5 MB each; 40 MB for four groups hashed, what one generation of 50,000 held before):
new ones go to the young generation; when it is full it becomes the old one and the old one is dropped;
a value found in the old one moves back to the young. The people of the last `CACHE_LIMIT` to twice as
many distinct values are never hashed twice, and memory stays bounded. A table's `MIN_VALUES` distinct
values or more are hashed by DuckDB instead (`array_hash.py`), neither looked up here nor kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

CACHE_LIMIT = 25_000  # pseudonyms per generation and group

Hash = Callable[[str, list[str]], list[str]]  # (group, values) -> their pseudonyms, in order


class PseudonymCache:
    """`pseudonyms(group, values)` through the kept ones, hashing the others with `hash_values`.

    Safe to share between threads: a call's answer comes from its own lookups and its own hashes; two
    threads changing a group's generations together can only drop pseudonyms (hashed again later)."""

    def __init__(self, hash_values: Hash, groups: Iterable[str], limit: int = CACHE_LIMIT) -> None:
        self._hash = hash_values
        self._limit = limit
        self._generations: dict[str, tuple[dict[str, str], dict[str, str]]] = {g: ({}, {}) for g in groups}

    def pseudonyms(self, group: str, values: list[str]) -> list[str]:
        """The pseudonym of each value, in order; each value not kept is hashed once."""
        young, old = self._generations[group]
        found = list(map(young.get, values))  # in C: most pages name people met on earlier pages
        if None not in found:
            return found  # type: ignore[return-value]
        missing = [value for value, pseudonym in zip(values, found, strict=True) if pseudonym is None]
        fresh: dict[str, str] = {}
        new: list[str] = []
        get_old = old.get
        for value in dict.fromkeys(missing):
            kept = get_old(value)
            if kept is None:
                new.append(value)
            else:
                fresh[value] = kept
        if new:
            fresh.update(zip(new, self._hash(group, new), strict=True))
        self._keep(group, young, fresh)
        return [fresh[v] if p is None else p for v, p in zip(values, found, strict=True)]

    def size(self, group: str) -> int:
        """How many pseudonyms the group keeps now (at most twice the limit)."""
        young, old = self._generations[group]
        return len(young) + len(old)

    def _keep(self, group: str, young: dict[str, str], fresh: dict[str, str]) -> None:
        if len(fresh) > self._limit:
            return  # one batch of more distinct values than a generation holds: not kept
        if len(young) + len(fresh) > self._limit:
            self._generations[group] = (fresh, young)
        else:
            young.update(fresh)
