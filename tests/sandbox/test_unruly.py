"""The unruly world (docs/contracts.md part 2): each named behaviour, on exact records of seed 1, scale 200.

The ids and moments below are what the seeded world chooses; each test checks the record before its
move, after it, and that the rest of the world is the default world's.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import httpx
import pytest

from sandbox.running import running_sandbox, running_sandbox_process
from sandbox.world import SyntheticWorld, WorldError
from sandbox.world.clock import T0, iso, to_ms
from sandbox.world.unruly import UnrulyWorld


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def move_to(world: SyntheticWorld, when: str) -> None:
    world.advance((to_ms(at(when)) - world.now) / 1000)


def everything(listing) -> list[dict]:
    return listing.page(0, len(listing))


def fiscal_of(world: SyntheticWorld, sale_id: str) -> list[dict]:
    return everything(world.fiscal_documents(at("2024-01-01T00:00:00Z"), world.clock, sale_id=sale_id))


@pytest.fixture
def world() -> UnrulyWorld:
    return UnrulyWorld(seed=1, scale=200)


def test_the_choices_are_seeded(world):
    plan = world.unruly
    assert {k: iso(v) for k, v in plan.deleted_products.items()} == {"4100008": "2026-06-14T09:26:51.954Z"}
    assert {k: iso(v) for k, v in plan.deleted_affiliations.items()} == {
        "6000059": "2026-06-11T01:52:20.770Z",
        "6000088": "2026-06-17T10:14:11.154Z",
    }
    assert {k: iso(v) for k, v in plan.deleted_transfers.items()} == {"400000011": "2026-06-14T11:23:02.758Z"}
    assert {k: iso(v) for k, v in plan.deleted_comments.items()} == {
        500000000: "2026-06-19T05:00:16.852Z",
        500000049: "2026-06-10T16:34:32.936Z",
        500000080: "2026-06-13T15:58:22.219Z",
    }
    assert sorted(plan.chargebacks) == [159, 161, 183]
    assert sorted(plan.late_slips) == [104, 155, 181]
    assert sorted(plan.late_renewals) == [17, 27, 30]
    assert sorted(plan.future_subscriptions) == [15, 20]
    again = UnrulyWorld(seed=1, scale=200).unruly
    assert (again.chargebacks, again.future_subscriptions) == (plan.chargebacks, plan.future_subscriptions)
    other = UnrulyWorld(seed=2, scale=200).unruly
    assert other.chargebacks != plan.chargebacks


def test_deleted_product_leaves_the_list_and_its_children_answer_404(world):
    assert "4100008" in [p["id"] for p in everything(world.products())]
    campaigns = world.product_campaigns("4100008")
    affiliations = [a["id"] for a in everything(world.affiliations(["4100008"]))]
    assert affiliations and set(affiliations) <= {a["id"] for a in everything(world.affiliations(None))}
    move_to(world, "2026-06-14T09:26:51.953Z")
    assert world.product_campaigns("4100008") == campaigns
    world.advance(0.001)
    products = [p["id"] for p in everything(world.products())]
    assert "4100008" not in products and len(products) == 11
    assert "4100008" not in [p["id"] for p in world.catalog()["products"]]
    for call in (world.product_campaigns, world.product_partners, lambda pid: world.affiliations([pid])):
        with pytest.raises(WorldError) as caught:
            call("4100008")
        assert caught.value.status == 404
    assert not set(affiliations) & {a["id"] for a in everything(world.affiliations(None))}


@pytest.mark.parametrize(
    ("kind", "record_id", "moment"),
    [
        ("affiliation", "6000059", "2026-06-11T01:52:20.770Z"),
        ("transfer", "400000011", "2026-06-14T11:23:02.758Z"),
        ("lesson_comment", 500000049, "2026-06-10T16:34:32.936Z"),
    ],
)
def test_deleted_records_leave_their_list_at_their_moment(world, kind, record_id, moment):
    def ids() -> list:
        if kind == "affiliation":
            return [a["id"] for a in everything(world.affiliations(None))]
        if kind == "transfer":
            return [t["id"] for t in everything(world.transfers())]
        return [c["id"] for c in everything(world.lesson_comments())]

    move_to(world, iso(to_ms(at(moment)) - 1))
    before = ids()
    assert record_id in before
    world.advance(0.001)
    assert ids() == [r for r in before if r != record_id]


def test_default_world_is_unchanged_before_the_moves_but_for_the_notation():
    unruly, default = UnrulyWorld(seed=1, scale=200), SyntheticWorld(seed=1, scale=200)

    def same_instant(a: dict, b: dict) -> bool:
        return a == b or {k: (at(v) if k.endswith("At") and v else v) for k, v in a.items()} == {
            k: (at(v) if k.endswith("At") and v else v) for k, v in b.items()
        }

    for name in ("products", "transfers", "lesson_comments"):
        assert everything(getattr(unruly, name)()) == everything(getattr(default, name)()), name
    for listing in ("creation", "update"):
        u, d = (
            everything(unruly.subscriptions(None, None, listing)),
            everything(default.subscriptions(None, None, listing)),
        )
        assert [r["id"] for r in u] == [r["id"] for r in d]
        assert all(same_instant(a, b) for a, b in zip(u, d, strict=True))
    noted = [
        r["id"]
        for r in everything(unruly.subscriptions(None, None, "creation"))
        if r["updatedAt"].endswith("-03:00")
    ]
    assert noted == ["200000006", "200000010", "200000016", "200000029"]


def test_offset_timestamps_are_the_same_instant_in_minus_three(world):
    default = SyntheticWorld(seed=1, scale=200)
    sale, plain = world.sale("100000025"), default.sale("100000025")
    assert sale["createdAt"].endswith("-03:00") and plain["createdAt"].endswith("Z")
    for field in ("createdAt", "updatedAt", "paidAt", "dueDate"):
        assert at(sale[field]) == at(plain[field])
    assert sale["createdAt"] == iso(to_ms(at(plain["createdAt"])) - 3 * 3600_000)[:-1] + "-03:00"
    assert {k: v for k, v in sale.items() if not k.endswith(("At", "Date"))} == {
        k: v for k, v in plain.items() if not k.endswith(("At", "Date"))
    }
    assert world.sale("100000026")["createdAt"].endswith("Z")
    noted = [a["id"] for a in everything(world.affiliations(None)) if a["createdAt"].endswith("-03:00")]
    assert noted == ["6000001", "6000048"]


def test_late_chargeback_refunds_an_old_sale_and_cancels_its_old_document(world):
    before = world.sale("100000159")
    assert (before["status"], before["paidAt"]) == ("paid", "2026-01-04T02:38:55.688Z")
    (document,) = fiscal_of(world, "100000159")
    assert document["document"]["status"] == "fileGenerated"
    moment = iso(world.unruly.chargebacks[159])
    assert moment == "2026-06-07T12:16:22.125Z"
    move_to(world, moment)
    after = world.sale("100000159")
    assert (after["status"], after["updatedAt"], after["paidAt"]) == ("refunded", moment, before["paidAt"])
    assert after["refund"]["refundedAt"] == moment and after["refund"]["value"] == before["total"]
    (cancelled,) = fiscal_of(world, "100000159")
    assert cancelled["document"]["status"] == "canceled"
    assert cancelled["document"]["emissionDate"] == document["document"]["emissionDate"]
    assert (at(moment) - at(document["document"]["emissionDate"])).days > 15
    canceled = everything(world.fiscal_documents(at("2024-01-01T00:00:00Z"), world.clock, status="canceled"))
    assert "100000159" in [d["sale"]["id"] for d in canceled]
    assert world.sale("100000160")["status"] == SyntheticWorld(1, 200).sale("100000160")["status"]


def test_expired_sale_becomes_paid(world):
    assert world.sale("100000155")["status"] == "expired"
    move_to(world, "2026-06-08T21:15:32.359Z")
    assert world.sale("100000155")["status"] == "expired"
    world.advance(0.001)
    paid = world.sale("100000155")
    moment = "2026-06-08T21:15:32.360Z"
    assert (paid["status"], paid["paidAt"], paid["updatedAt"]) == ("paid", moment, moment)


def test_future_updated_at_runs_ahead_of_the_clock_and_is_listed_by_it(world):
    assert world.subscription("200000015")["updatedAt"] == "2025-03-09T02:58:12.932Z"
    move_to(world, "2026-06-19T09:13:43.614Z")
    record = world.subscription("200000015")
    assert record["updatedAt"] == "2026-07-21T05:32:08.749Z" and at(record["updatedAt"]) > world.clock
    listed = everything(world.subscriptions(at("2026-07-21T05:32:08.749Z"), None, "update"))
    assert [r["id"] for r in listed] == ["200000015"]
    up_to_now = everything(world.subscriptions(at("2026-06-01T00:00:00Z"), world.clock, "update"))
    assert "200000015" not in [r["id"] for r in up_to_now]


def test_renewal_moves_due_dates_and_charges_before_updated_at(world):
    move_to(world, "2026-06-09T20:53:56.629Z")
    before = world.subscription("200000017")
    world.advance(60)  # one minute after the due date: the default world would have it paid by now
    renewed = world.subscription("200000017")
    assert renewed["recurrence"]["currentDueDate"] == "2026-06-09T20:53:56.630Z"
    assert renewed["recurrence"] != before["recurrence"]
    assert renewed["charges"]["current"] == before["charges"]["current"] + 1
    assert renewed["charges"]["paid"] == before["charges"]["paid"]
    assert renewed["charges"]["pending"] == before["charges"]["pending"] + 1
    assert (renewed["updatedAt"], renewed["status"]) == (before["updatedAt"], before["status"])
    since = everything(world.subscriptions(at("2026-06-09T00:00:00Z"), None, "update"))
    assert "200000017" not in [r["id"] for r in since]
    move_to(world, "2026-06-12T12:46:18.965Z")
    paid = world.subscription("200000017")
    assert paid["updatedAt"] == "2026-06-12T12:46:18.965Z"
    assert paid["charges"]["paid"] == renewed["charges"]["paid"] + 1 and paid["charges"]["pending"] == 0
    assert "200000017" in [
        r["id"] for r in everything(world.subscriptions(at("2026-06-12T00:00:00Z"), None, "update"))
    ]


def test_http_and_the_command_line_serve_the_unruly_world():
    day = 86400.0
    with running_sandbox(seed=1, scale=200, rate_limits=False, unruly=True) as sandbox:
        auth = {"Authorization": f"Bearer {sandbox.token()}"}
        url = f"{sandbox.base_url}/store/v1/products/4100008/campaigns"
        assert httpx.get(url, headers=auth).status_code == 200
        sandbox.advance(14 * day)
        gone = httpx.get(url, headers=auth)
        assert (gone.status_code, gone.json()["error"]) == (404, "not_found")
        assert gone.headers["date"] == "Mon, 15 Jun 2026 00:00:00 GMT"
    with running_sandbox_process(seed=1, scale=200, rate_limits=False, unruly=True) as sandbox:
        sandbox.advance(14 * day)
        assert "4100008" not in [p["id"] for p in sandbox.catalog()["products"]]
    with running_sandbox(seed=1, scale=200, rate_limits=False) as sandbox:
        sandbox.advance(14 * day)
        assert "4100008" in [p["id"] for p in sandbox.catalog()["products"]]
    assert T0 == to_ms(datetime(2026, 6, 1, tzinfo=UTC))


def test_unruly_and_world_together_are_a_configuration_error():
    both = subprocess.run(
        [sys.executable, "-m", "sandbox", "serve", "--unruly", "--world", "x:y", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert both.returncode == 2
    assert both.stderr.strip() == "error: --unruly and --world both choose the world; give one of them"
    with (
        pytest.raises(ValueError, match="either world or unruly"),
        running_sandbox(world=SyntheticWorld(), unruly=True),
    ):
        pass
