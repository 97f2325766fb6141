"""The run's kept pseudonyms: each value hashed once while it is kept, two bounded generations."""

from __future__ import annotations

from sources.platform.privacy.cache import PseudonymCache


def _cache(limit: int) -> tuple[PseudonymCache, list[str]]:
    hashed: list[str] = []

    def hash_values(group: str, values: list[str]) -> list[str]:
        hashed.extend(values)
        return [f"{group}:{value.upper()}" for value in values]

    return PseudonymCache(hash_values, ["emails", "names"], limit), hashed


def test_each_value_is_hashed_once_and_answers_keep_the_order() -> None:
    cache, hashed = _cache(10)
    assert cache.pseudonyms("emails", ["a", "b", "a"]) == ["emails:A", "emails:B", "emails:A"]
    assert cache.pseudonyms("emails", ["b", "c"]) == ["emails:B", "emails:C"]
    assert cache.pseudonyms("names", ["a"]) == ["names:A"]  # groups are kept apart
    assert hashed == ["a", "b", "c", "a"]


def test_a_full_generation_becomes_the_old_one_and_what_is_met_there_moves_back() -> None:
    cache, hashed = _cache(3)
    cache.pseudonyms("emails", ["a", "b"])
    cache.pseudonyms("emails", ["c", "d"])  # 2 + 2 > 3: {a, b} is now the old generation
    assert cache.size("emails") == 4
    assert cache.pseudonyms("emails", ["a"]) == ["emails:A"]  # found in the old one: not hashed again
    assert hashed == ["a", "b", "c", "d"]
    cache.pseudonyms("emails", ["e", "f"])  # {c, d, a} is full: it becomes the old one, {a, b} goes
    assert cache.pseudonyms("emails", ["a", "b"]) == ["emails:A", "emails:B"]
    assert hashed == ["a", "b", "c", "d", "e", "f", "b"]
    assert cache.size("emails") <= 6


def test_a_batch_of_more_distinct_values_than_a_generation_is_hashed_whole_and_not_kept() -> None:
    cache, hashed = _cache(3)
    values = ["a", "b", "c", "d", "e", "a"]
    assert cache.pseudonyms("emails", values) == [f"emails:{v.upper()}" for v in values]
    assert cache.size("emails") == 0
    assert hashed == ["a", "b", "c", "d", "e"]
