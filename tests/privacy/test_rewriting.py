"""Which change of the privacy settings a companion table can be rewritten for, and how."""

from __future__ import annotations

from pipelines.sync.privacy_rewrite import rewriting
from sources.platform.privacy import OFF, parse_privacy

KEY = "privacy-key-for-tests-7f3a9c0d"


def test_raw_values_are_hashed_or_blocked_and_pseudonyms_blocked() -> None:
    before = parse_privacy({"emails": "keep", "phones": "hash", "names": "block"}, KEY)
    after = parse_privacy({"emails": "hash", "phones": "block", "names": "keep", "addresses": "block"}, KEY)
    rewrite, impossible = rewriting(before.record(), after)
    assert impossible == []
    assert dict(rewrite.modes) == {
        "documents": "keep",
        "emails": "hash",
        "phones": "block",
        "names": "keep",  # null under block: nothing to change
        "addresses": "block",
    }
    assert rewrite.pseudonym("emails", " Ana@X.com") == after.pseudonym("emails", "ana@x.com")


def test_the_same_settings_change_nothing() -> None:
    settings = parse_privacy({"emails": "hash"}, KEY)
    rewrite, impossible = rewriting(settings.record(), settings)
    assert impossible == [] and not rewrite.active
    rewrite, impossible = rewriting(OFF.record(), OFF)
    assert impossible == [] and not rewrite.active


def test_a_pseudonym_cannot_be_turned_back_nor_into_another_keys() -> None:
    hashed = parse_privacy({"emails": "hash", "documents": "hash"}, KEY)
    assert rewriting(hashed.record(), OFF)[1] == ["documents hash -> keep", "emails hash -> keep"]
    rotated = parse_privacy({"emails": "hash", "documents": "block"}, "another-key-for-tests-12345")
    rewrite, impossible = rewriting(hashed.record(), rotated)
    assert impossible == ["emails under another key"]
    assert rewrite.mode("documents") == "block"
