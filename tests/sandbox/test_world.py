"""The synthetic world: determinism, coverage, references, filters, time, paging, writes, errors, scale."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from sandbox.world import SyntheticWorld, WorldError
from sandbox.world.clock import to_datetime
from sandbox.world.people import cpf_is_valid
from sandbox.world.subscriptions import PRICE_FACTORS
from tests.support.world_checks import (
    ENUMS,
    EPOCH_START,
    FAR,
    attendees,
    collect,
    decimal,
    dig,
    full,
    sales,
    snapshot,
    to_datetime_iso,
    values,
)


@pytest.fixture(scope="module")
def tiny() -> SyntheticWorld:
    return SyntheticWorld(seed=1, scale=50)


# -- determinism -----------------------------------------------------------------------------------
def test_same_seed_same_bytes_and_other_seed_differs():
    a, b = SyntheticWorld(seed=7, scale=300), SyntheticWorld(seed=7, scale=300)
    assert snapshot(a) == snapshot(b)
    assert snapshot(SyntheticWorld(seed=8, scale=300)) != snapshot(a)
    a.advance(86400 * 3)
    b.advance(86400 * 3)
    assert snapshot(a) == snapshot(b)


def test_determinism_does_not_depend_on_the_process_hash_seed():
    code = (
        "from tests.support.world_checks import snapshot; from sandbox.world import SyntheticWorld; "
        "import hashlib; print(hashlib.sha256(snapshot(SyntheticWorld(4, 120)).encode()).hexdigest())"
    )
    outs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", code],
                env=env,
                cwd=Path(__file__).resolve().parents[2],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
    assert len(outs) == 1


# -- coverage ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 99])
def test_every_enum_value_exists_in_a_50_sale_world(seed):
    records = collect(SyntheticWorld(seed=seed, scale=50))
    tickets = [tk for e in records["event"] for tk in e["tickets"]]
    assert tickets
    for key, expected in ENUMS.items():
        kind, path = key.split(".", 1)
        seen = values(records[kind], path)
        if key in ("sale.refund.type", "subscription.interruption.type"):
            seen.discard(None)
        assert expected <= seen, (key, expected - seen)


def test_tiny_world_has_every_kind_of_record(tiny):
    records = collect(tiny)
    assert len(records["sale"]) == 50
    assert all(records[k] for k in records), [k for k in records if not records[k]]
    assert any(s["orderBump"]["has"] for s in records["sale"])
    assert len(tiny.webhook_origins()) == 6


# -- references -------------------------------------------------------------------------------------
def test_sales_reference_products_and_are_coherent(mid, mid_records):
    products = {p["id"]: p for p in mid_records["product"]}
    by_id = {s["id"]: s for s in mid_records["sale"]}
    assert [int(s["id"]) for s in mid_records["sale"]] == sorted(int(s["id"]) for s in mid_records["sale"])
    created = [s["createdAt"] for s in mid_records["sale"]]
    assert created == sorted(created)  # creation is monotone in the index
    for s in mid_records["sale"]:
        assert s["id"].isdigit() and s["product"]["id"] in products
        assert all(item["productId"] in products for item in s["items"])
        assert (s["refund"] is not None) == (s["status"] in ("waitingRefund", "refunded")), s["id"]
        gross, net = decimal(s["grossGain"]), decimal(s["netGain"])
        parts = [
            s["fee"],
            s["companyXFee"],
            s["installmentSettlementFee"],
            s["others"],
            s["partnersGain"],
            s["affiliatesGain"],
        ]
        assert gross == net + sum((decimal(m) for m in parts if m is not None), Decimal(0))
        assert Decimal(0) <= net <= gross == decimal(s["total"]) <= decimal(s["totalInterest"])
        assert decimal(s["partnersGain"]) == sum((decimal(p["netGain"]) for p in s["partners"]), Decimal(0))
        assert decimal(s["affiliatesGain"]) == sum(
            (decimal(a["netGain"]) for a in s["affiliates"]), Decimal(0)
        )
        assert sum((decimal(i["value"]) for i in s["items"]), Decimal(0)) <= gross
        buyer = s["buyer"]
        assert cpf_is_valid(buyer["document"]) and "@" in buyer["email"] and buyer["phone"].isdigit()
        assert s["createdAt"] <= s["updatedAt"] <= mid.clock.isoformat().replace("+00:00", ".000Z")
        if s["status"] in ("paid", "refunded", "waitingRefund"):
            assert s["paidAt"] is not None
        bump = s["orderBump"]
        if bump["has"] and not bump["isMainSale"]:
            main = by_id[str(bump["mainSaleId"])]
            assert isinstance(bump["mainSaleId"], int) and main["orderBump"]["isMainSale"]
            assert main["buyer"] == buyer and main["payment"]["detail"] == s["payment"]["detail"]
    assert any(s["status"] == "refunded" and s["refund"]["refundedAt"] for s in mid_records["sale"])


def test_subscriptions_point_at_their_first_invoice(mid, mid_records):
    products = {p["id"]: p for p in mid_records["product"]}
    changed = 0
    for sub in mid_records["subscription"]:
        sale = mid.sale(sub["firstInvoiceId"])
        assert sub["id"].isdigit() and sale["contractId"] == sub["id"]
        assert products[sale["product"]["id"]]["payment"]["type"] == "subscription"
        assert sale["product"]["billingType"] == "recurrence"
        assert sub["createdAt"] == sale["createdAt"] <= sub["updatedAt"]
        assert sub["client"]["email"] == sale["buyer"]["email"]
        first = sale["items"][0]["unitValue"]
        assert sub["payment"]["price"]["currency"] == first["currency"]
        # the first invoice's price, or that price after the plan's one change (an upgrade or downgrade)
        assert sub["payment"]["price"]["value"] in {
            round(round(first["value"] * 100) * factor) / 100 for factor in (1, *PRICE_FACTORS)
        }
        changed += sub["payment"]["price"] != first
        assert sub["products"][0]["id"] == sale["product"]["id"]
        assert (sub["interruption"] is not None) == (sub["status"] in ("canceled", "suspended"))
        charges = sub["charges"]
        assert charges["paid"] + charges["pending"] == charges["current"] and charges["paid"] >= 0
        if sub["status"] not in ("free", "trial", "awaitingPayment") and charges["paid"]:
            assert sale["status"] == "paid"
    assert 0 < changed < len(mid_records["subscription"]) / 4


def test_fiscal_documents_match_their_sales(mid, mid_records):
    assert len(mid_records["fiscal"]) > 0.4 * len([s for s in mid_records["sale"] if s["paidAt"]])
    for doc in mid_records["fiscal"]:
        sale = mid.sale(doc["sale"]["id"])
        assert doc["sale"]["total"] == sale["total"] and doc["sale"]["paymentDate"] == sale["paidAt"]
        assert (
            doc["product"]["id"] == sale["product"]["id"] and doc["client"]["email"] == sale["buyer"]["email"]
        )
        assert doc["document"]["emissionDate"] >= sale["paidAt"]


def test_attendees_point_at_ticket_sales_and_tickets(mid):
    seen = 0
    for ev_ref, a in attendees(mid):
        event = mid.event(ev_ref["id"])
        assert a["eventId"] == event["id"]
        uuid.UUID(a["id"])
        ticket = next(tk for tk in event["tickets"] if tk["id"] == a["ticketId"])
        sale = mid.sale(a["invoiceId"])
        assert sale["product"]["type"] == "ticket" and sale["paidAt"] is not None
        assert {lot["platformProductId"] for lot in ticket["lots"]} == {int(sale["product"]["id"])}
        assert a["documentType"] == "passport" or cpf_is_valid(a["document"])
        assert (a["checkinDate"] is not None) == (a["status"] == "presence_confirmed")
        seen += 1
    assert seen > 100


def test_affiliations_campaigns_partners_reference_products(mid_records):
    products = {p["id"] for p in mid_records["product"]}
    assert all(a["product"]["id"] in products for a in mid_records["affiliation"])
    events = mid_records["event"]
    for e in events:
        uuid.UUID(e["id"])
        for tk in e["tickets"]:
            assert tk["eventId"] == e["id"] and all(lot["ticketId"] == tk["id"] for lot in tk["lots"])


# -- time -------------------------------------------------------------------------------------------
def test_advance_brings_new_records_and_touches_only_changed_ones():
    world = SyntheticWorld(seed=5, scale=1500)
    before = collect(world)
    assert collect(world) == before  # nothing changes without advance
    # past the next event's start, so its attendees check in (and at least 25 days: refunds, renewals)
    events = world.events_
    upcoming = events.start(events.event_for_time(world.now))
    world.advance(max(25 * 86400, (upcoming - world.now) / 1000 + 86400))
    after = collect(world)
    clock_before = "2026-06-01T00:00:00.000Z"
    for kind, stamp in (("sale", "updatedAt"), ("subscription", "updatedAt"), ("attendee", "modifiedAt")):
        old = {r["id"]: r for r in before[kind]}
        new = {r["id"]: r for r in after[kind]}
        assert len(new) > len(old), kind  # records keep arriving
        assert all(r["createdAt"] > clock_before for k, r in new.items() if k not in old)
        changed = 0
        for key, rec in old.items():
            if new[key] != rec:
                changed += 1
                assert rec[stamp] < new[key][stamp] and new[key][stamp] > clock_before, (kind, key)
            else:
                assert new[key][stamp] == rec[stamp]
        assert changed, kind
    assert len(after["comment"]) > len(before["comment"]) and len(after["fiscal"]) > len(before["fiscal"])


def test_refunds_happen_within_thirty_days_of_payment(mid_records):
    refunded = [s for s in mid_records["sale"] if s["status"] == "refunded"]
    assert refunded
    for s in refunded:
        paid, done = to_datetime_iso(s["paidAt"]), to_datetime_iso(s["refund"]["refundedAt"])
        assert paid < done <= paid + timedelta(days=30)


# -- paging -----------------------------------------------------------------------------------------
def test_pages_concatenate_to_the_full_listing(mid):
    listings = [
        mid.subscriptions(None, None, "creation"),
        mid.subscriptions(None, None, "update"),
        mid.transfers(),
        mid.products(),
        mid.affiliations(None),
        mid.lesson_comments(read=True),
        mid.fiscal_documents(EPOCH_START, FAR),
    ]
    for listing in listings:
        everything = full(listing)
        pages = [r for offset in range(0, len(listing) + 14, 7) for r in listing.page(offset, 7)]
        assert pages == everything and len(everything) == len(listing)
        keys = [str(dig(r, "document.id") or r["id"]) for r in everything]
        assert len(set(keys)) == len(keys)
        assert listing.page(len(listing) + 5, 10) == []


# -- writes -----------------------------------------------------------------------------------------
def test_manual_attendee_overlay_and_stock():
    world = SyntheticWorld(seed=11, scale=300)
    event = world.event(world.catalog()["events"][-1]["id"])
    ticket = next(tk for tk in event["tickets"] if not tk["isUnlimited"])
    body = {
        "eventId": event["id"],
        "ticketId": ticket["id"],
        "name": "Zé Manual",
        "document": "529.982.247-25",
        "documentType": "cpf",
        "email": "ze@example.com",
        "phone": "5511999990000",
        "useStock": False,
    }
    created = world.add_attendee(body)
    assert created["status"] == "presence_confirmed" and created["manuallyCreated"] is True
    listed = [a for a in full(world.attendees(event["id"])) if a["id"] == created["id"]]
    assert len(listed) == 1 and listed[0]["manuallyCreated"] and listed[0]["status"] == "presence_confirmed"
    assert full(world.attendees(event["id"], search="zé manual"))[0]["id"] == created["id"]
    for bad, status in (
        ({"eventId": str(uuid.UUID(int=1))}, 404),
        ({"ticketId": str(uuid.UUID(int=2))}, 404),
        ({"document": "529.982.247-26"}, 422),
        ({"document": "111.111.111-11"}, 422),
    ):
        with pytest.raises(WorldError) as err:
            world.add_attendee({**body, **bad})
        assert err.value.status == status
    assert (
        world.add_attendee({**body, "documentType": "passport", "document": "X1"})["documentType"]
        == "passport"
    )
    quantity = sum(lot["quantity"] for lot in ticket["lots"])
    with pytest.raises(WorldError) as err:
        for _ in range(quantity + 1):
            world.add_attendee({**body, "useStock": True})
    assert (err.value.status, err.value.message) == (422, "insufficient stock")
    lots_after = next(tk for tk in world.event(event["id"])["tickets"] if tk["id"] == ticket["id"])["lots"]
    assert sum(lot["quantity"] for lot in lots_after) < quantity


def test_cart_validation_and_response(tiny):
    product = full(tiny.products())[0]["id"]
    body = {
        "orderId": "o-1",
        "postbackUrl": "https://example.com/hook",
        "items": [
            {
                "productId": product,
                "description": "x",
                "quantity": 1,
                "price": {"value": 10, "currency": "BRL"},
            }
        ],
    }
    cart = tiny.create_cart(body)
    assert (
        cart["orderId"] == "o-1" and cart["paymentUrl"].startswith("https://") and cart["id"] and cart["key"]
    )
    assert cart["items"] == body["items"]
    bads = [
        {"orderId": ""},
        {"postbackUrl": None},
        {"items": [{**body["items"][0], "price": {"value": 1, "currency": "USD"}}]},
        {"items": [{**body["items"][0], "productId": "999"}]},
        {"items": [{"productId": product}]},
    ]
    for bad in bads:
        with pytest.raises(WorldError) as err:
            tiny.create_cart({**body, **bad})
        assert err.value.status == 422 and err.value.details


def test_not_found_and_validation_errors(tiny):
    calls = [
        (lambda: tiny.sale("1"), 404),
        (lambda: tiny.sale("abc"), 404),
        (lambda: tiny.sale(str(100_000_000 + 50)), 404),
        (lambda: tiny.subscription("200999999"), 404),
        (lambda: tiny.subscription("x"), 422),
        (lambda: tiny.event(str(uuid.UUID(int=3))), 404),
        (lambda: tiny.attendees(str(uuid.UUID(int=3))), 404),
        (lambda: tiny.product_campaigns("1"), 404),
        (lambda: tiny.product_partners("1"), 404),
        (lambda: tiny.delivery("escola-saber", 1), 404),
        (lambda: tiny.delivery("nope", 700), 404),
        (lambda: tiny.enrollments("nope", "x"), 404),
        (lambda: tiny.enrollments("escola-saber", "x"), 404),
    ]
    for call, status in calls:
        with pytest.raises(WorldError) as err:
            call()
        assert err.value.status == status
    school = tiny.catalog()["schools"][0]
    assert tiny.delivery(school["team_slug"], school["delivery_ids"][0])["id"] == school["delivery_ids"][0]
    enrollments = full(tiny.enrollments(school["team_slug"], school["student_slugs"][0]))
    assert enrollments and all(0 <= e["progress"] <= 100 for e in enrollments)


# -- scale ------------------------------------------------------------------------------------------
def test_a_million_sale_world_answers_pages_with_small_memory():
    tracemalloc.start()
    world = SyntheticWorld(seed=1, scale=1_000_000)
    subs = world.subscriptions(None, None, "creation")
    page = subs.page(150_000, 100)
    batch = [world.sale(str(100_000_000 + 999_000 + i)) for i in range(100)]
    comments = world.lesson_comments(lesson_id=world.courses.lessons[1][3]).page(1_000, 100)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(subs) == 200_000 and len(page) == 100 and len({s["id"] for s in page}) == 100
    assert len({s["id"] for s in batch}) == 100 and len(comments) == 100
    assert world.sales.count_at(world.now) == 1_000_000
    assert len(world.transfers()) == 1_000_000 // 30 and len(world.lesson_comments()) == 500_000
    assert peak < 32 * 2**20, peak  # nothing is materialised per record of the world
    day = to_datetime_iso("2026-05-20T00:00:00Z")
    docs = world.fiscal_documents(day, day + timedelta(hours=6))
    assert 100 < len(docs) < 2_000 and len(docs.page(0, 100)) == 100


def test_sales_at_the_boundary_appear_exactly_when_created():
    world = SyntheticWorld(seed=2, scale=100)
    for _ in range(40):
        n = world.sales.count_at(world.now)
        assert world.sale(str(100_000_000 + n - 1))["createdAt"] <= world.catalog()["clock"]
        with pytest.raises(WorldError):
            world.sale(str(100_000_000 + n))
        world.advance(3 * 3600)
    assert to_datetime(world.now) == world.clock
    assert sales(world)[-1]["createdAt"] > "2026-06-01"
