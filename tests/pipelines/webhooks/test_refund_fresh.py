"""End to end: the sandbox refunds a sale, its webhook arrives, and the next sync has the refund even
though that run's sale-details budget is smaller than the backlog."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import dlt

from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world import SyntheticWorld
from sandbox.world.clock import DAY, to_ms
from sandbox.world.webhooks import delivery_id
from sources.platform.resources.store_sale_ids import pending_sale_ids
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.support.sync_helpers import query, source_options
from tests.support.webhooks import SECRET, running_receiver

TIME_SCALE = 600.0


def next_refund(world: SyntheticWorld) -> tuple[str, int]:
    """The sale whose refund comes soonest after the world's clock: (sale id, refund time)."""
    now = to_ms(world.clock)
    sales = world.sales
    candidates = [
        (refund_at, sales.sale_id(i))
        for i in range(sales.count_at(now + 60 * DAY))
        if (refund_at := sales.core(i).refund_at) is not None and refund_at > now
    ]
    refund_at, sale_id = min(candidates)
    return sale_id, refund_at


def wait_delivered(sandbox: SandboxHandle, wanted: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snapshot = sandbox.webhooks()
        done = {d["id"] for d in snapshot["deliveries"] if d["delivered"]}
        if wanted in done and snapshot["queued"] == 0:
            return snapshot
        time.sleep(0.05)
    raise AssertionError(f"delivery {wanted} did not arrive: {sandbox.webhooks()}")


def sales_state(tmp_path: Path) -> dict[str, Any]:
    pipeline = dlt.attach("platform_sync", pipelines_dir=str(tmp_path / ".dlt" / "pipelines"))
    return dict(pipeline.state["sources"]["platform"]["resources"]["sales"])


def warehouse(tmp_path: Path) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name="check",
        destination=dlt.destinations.duckdb(str(tmp_path / "warehouse.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "check"),
    )


def test_refund_announced_by_webhook_is_fresh_after_the_next_budget_limited_sync(tmp_path):
    with running_sandbox(seed=3, scale=400, time_scale=TIME_SCALE) as sandbox:
        assert sandbox.apps is not None
        world = sandbox.apps.state.world
        assert isinstance(world, SyntheticWorld)
        token = sandbox.token()
        options = source_options(sandbox, token, rate_limit_time_scale=TIME_SCALE, sales_max_requests=5)
        env = cli_env(tmp_path, options)
        env["SOURCES__PLATFORM__WEBHOOK_SECRET"] = SECRET
        sync = ["sync", "--no-progress", "--resources", "subscriptions,fiscal_documents,sales"]
        first = run_cli(sync, env, tmp_path)
        assert first.returncode == 0, first.stdout + first.stderr  # sale ids left over only warn
        backlog = len(pending_sale_ids(sales_state(tmp_path)))
        sale_id, refund_at = next_refund(world)

        with running_receiver(tmp_path, tmp_path / "webhooks.sqlite") as receiver:
            sandbox.set_webhooks(receiver.url + "/webhooks", SECRET)
            sandbox.advance((refund_at - to_ms(world.clock)) / 1000 + 1)
            snapshot = wait_delivered(sandbox, delivery_id("store.invoice_refunded", sale_id, refund_at))
        assert snapshot["given_up"] == 0 and snapshot["deliveries"][0]["id"] == "ping-1"

        loaded = run_cli(["webhooks", "load", "--store", "webhooks.sqlite"], env, tmp_path)
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        check = warehouse(tmp_path)
        assert query(check, "select count(*) from webhook_events") == [(len(snapshot["deliveries"]),)]
        announced_sql = "select distinct sale_id from webhook_events where sale_id is not null"
        announced = [row[0] for row in query(check, announced_sql)]
        assert sale_id in announced
        budget = len(announced)
        assert budget < backlog, (budget, backlog)

        env["SOURCES__PLATFORM__SALES_MAX_REQUESTS"] = str(budget)
        second = run_cli(sync, env, tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        sql = f"select status, refund__refunded_at is not null from sales where id = '{sale_id}'"
        rows = query(check, sql)
        assert rows == [("refunded", True)]
        state = sales_state(tmp_path)
        assert (
            len(pending_sale_ids(state)) >= backlog - budget
        )  # the backlog still waits: the budget went first
        newest = query(check, "select max(_dlt_load_id) from webhook_events")[0][0]
        assert state["webhooks_loaded_until"] == newest
        assert sandbox.stats()["operations"]["sale_details"].get("429", 0) == 0
