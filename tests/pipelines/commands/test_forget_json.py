"""forget's walk of free JSON (no warehouse): a quarantined record is blanked with its resource's model, as
its table would be (issue 49: keys no longer guessed by name alone)."""

from __future__ import annotations

from pipelines.commands.forget import Wanted, blank_person
from sources.platform.models import Sale, Subscription
from sources.platform.privacy.fields import plan_for

ANA = Wanted("emails", "ana@example.com", None)


def test_a_quarantined_sale_loses_the_names_beside_its_forgotten_buyer_and_keeps_the_products() -> None:
    record = {
        "id": "1",
        "buyer": {"email": "ANA@example.com ", "name": "Ana", "phone": "55"},
        "producer": {"id": 5, "name": "Seller Sa"},
        "product": {"id": "p", "name": "Curso"},
        "affiliates": [{"email": "bia@example.com", "name": "Bia"}],
    }
    blanked, hits = blank_person(record, ANA, plan=plan_for(Sale))
    assert hits == 1
    assert blanked["buyer"] == {"email": None, "name": None, "phone": None}
    assert blanked["producer"] == {"id": 5, "name": None}
    assert blanked["product"] == {"id": "p", "name": "Curso"}
    assert blanked["affiliates"] == [{"email": "bia@example.com", "name": "Bia"}]
    # by key names alone (a webhook delivery: no model), the seller's name beside her stays
    guessed, _ = blank_person(record, ANA)
    assert guessed["producer"] == {"id": 5, "name": "Seller Sa"}


def test_a_quarantined_subscription_loses_who_cancelled_beside_its_forgotten_client() -> None:
    record = {
        "id": 7,
        "client": {"email": "ana@example.com", "name": "Ana"},
        "interruption": {"responsible": "Ana Lima", "reason": "price"},
        "plan": {"name": "Gold"},
    }
    blanked, hits = blank_person(record, ANA, plan=plan_for(Subscription))
    assert hits == 1
    assert blanked["client"] == {"email": None, "name": None}
    assert blanked["interruption"] == {"responsible": None, "reason": "price"}
    assert blanked["plan"] == {"name": "Gold"}
