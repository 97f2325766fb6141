"""`platform-sync cart create` against the sandbox: rules checked first, sent once, lost answers."""

from __future__ import annotations

import json

from sandbox.faults import FaultInjector, FaultSpec
from sandbox.running import running_sandbox
from tests.pipelines.cli.test_cli import run_cli
from tests.support.write_commands import env_for

FAST = 600.0


def cart(products: list[str], order_id: str = "order-1", **changes: object) -> dict[str, object]:
    body: dict[str, object] = {
        "orderId": order_id,
        "postbackUrl": "https://shop.example/hooks/platform",
        "returnUrl": "https://shop.example/thanks",
        "items": [
            {
                "productId": products[0],
                "description": "Curso",
                "quantity": 1,
                "price": {"value": 97.0, "currency": "BRL"},
            },
            {"productId": products[1], "description": "Ebook", "quantity": 2},
        ],
        "customer": {"email": "ana@example.com", "name": "Ana"},
    }
    body.update(changes)
    return body


def test_cart_is_checked_created_once_and_its_payment_url_printed(tmp_path):
    with running_sandbox(seed=2, scale=200, time_scale=FAST) as sandbox:
        products = [p["id"] for p in sandbox.catalog()["products"]]
        env = env_for(tmp_path, sandbox, sandbox.token(), FAST)
        (tmp_path / "cart.json").write_text(json.dumps(cart(products)))
        created = run_cli(["cart", "create", "--file", "cart.json"], env, tmp_path)
        assert created.returncode == 0, created.stdout + created.stderr
        carts = sandbox.carts()
        assert len(carts) == 1 and carts[0]["orderId"] == "order-1" and len(carts[0]["items"]) == 2
        assert created.stdout.strip().splitlines()[-1] == carts[0]["paymentUrl"]

        again = run_cli(["cart", "create", "--file", "cart.json"], env, tmp_path)
        assert again.returncode == 0 and "not sent again" in again.stdout
        assert again.stdout.strip().splitlines()[-1] == carts[0]["paymentUrl"]

        one = ["cart", "create", "--order-id", "order-2", "--postback-url", "https://shop.example/h"]
        one += ["--product", products[2], "--description", "Mentoria", "--quantity", "1", "--price", "10"]
        flags = run_cli(one, env, tmp_path)
        assert flags.returncode == 0, flags.stdout + flags.stderr
        assert [c["orderId"] for c in sandbox.carts()] == ["order-1", "order-2"]
        assert sandbox.carts()[1]["items"] == [
            {
                "productId": products[2],
                "description": "Mentoria",
                "quantity": 1,
                "price": {"value": 10.0, "currency": "BRL"},
            }
        ]
        assert sandbox.stats()["operations"]["create_cart"] == {"201": 2}


def test_cart_breaking_the_spec_rules_is_refused_before_sending(tmp_path):
    with running_sandbox(seed=2, scale=200, time_scale=FAST) as sandbox:
        products = [p["id"] for p in sandbox.catalog()["products"]]
        env = env_for(tmp_path, sandbox, sandbox.token(), FAST)
        usd = cart(products)
        usd["items"][0]["price"]["currency"] = "USD"  # type: ignore[index]
        cases = {
            "usd.json": (usd, "only BRL is accepted"),
            "nodesc.json": (
                cart(products, items=[{"productId": products[0], "quantity": 1}]),
                "items[0].description",
            ),
            "noorder.json": (cart(products, orderId=""), "orderId is required"),
            "foreign.json": (cart(["not-ours", products[0]]), "products not of this account: not-ours"),
        }
        for name, (body, message) in cases.items():
            (tmp_path / name).write_text(json.dumps(body))
            refused = run_cli(["cart", "create", "--file", name], env, tmp_path)
            assert refused.returncode == 2 and message in refused.stderr, (name, refused.stderr)
        assert "create_cart" not in sandbox.stats()["operations"] and sandbox.carts() == []


def first_request_passes_second_drops() -> int:
    for seed in range(1000):
        injector = FaultInjector(FaultSpec.parse(f"drop=0.5,seed={seed}"))
        if [injector.next().kind for _ in range(2)] == [None, "drop"]:
            return seed
    raise AssertionError("no such seed")


def test_a_lost_answer_is_never_resent_blindly(tmp_path):
    with running_sandbox(seed=2, scale=200, time_scale=FAST) as sandbox:
        products = [p["id"] for p in sandbox.catalog()["products"]]
        env = env_for(tmp_path, sandbox, sandbox.token(), FAST)
        (tmp_path / "cart.json").write_text(json.dumps(cart(products)))
        # The product list (one page) is answered, the cart's POST loses its connection.
        sandbox.set_faults(f"drop=0.5,seed={first_request_passes_second_drops()}")
        lost = run_cli(["cart", "create", "--file", "cart.json"], env, tmp_path)
        assert lost.returncode == 1 and "may have been created" in lost.stderr, lost.stdout + lost.stderr
        assert sandbox.stats()["operations"]["create_cart"] == {"dropped": 1}  # tried once, not retried
        sandbox.set_faults(None)
        refused = run_cli(["cart", "create", "--file", "cart.json"], env, tmp_path)
        assert refused.returncode == 1 and "--resend" in refused.stderr
        assert sandbox.stats()["operations"]["create_cart"] == {"dropped": 1}
        resent = run_cli(["cart", "create", "--file", "cart.json", "--resend"], env, tmp_path)
        assert resent.returncode == 0, resent.stdout + resent.stderr
        assert [c["orderId"] for c in sandbox.carts()] == ["order-1"]
        assert sandbox.stats()["operations"]["create_cart"] == {"dropped": 1, "201": 1}
