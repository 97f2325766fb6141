"""The models on what the pipeline really loads: the sandbox synced into DuckDB at two seeds and scales,
then `dbt build` through pipelines.dbt.runner.run_models. Every model builds and every test passes (the
warn-level references included), and the marts agree with the raw data they summarise.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime
from pathlib import Path

import dlt
import duckdb
import pytest

from pipelines.dbt.runner import headline_figures, run_models
from pipelines.sync.checkpoints import Checkpoints
from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from sandbox.world import SyntheticWorld
from tests.support.sync_helpers import source_options
from tests.support.warehouses import MODELS_ONLY

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("dbt_models_sandbox"), pytest.mark.timeout(900)]

TIME_SCALE = 600.0  # rate-limit windows of 0.1 s


# (raw count, mart count) pairs that must agree: every raw row of the main tables reaches its mart, once.
RAW_TO_MART = (
    ("select count(*) from platform_raw.sales", "select count(*) from marts.fct_sales"),
    ("select count(*) from platform_raw.sales__items", "select count(*) from marts.fct_sale_items"),
    ("select count(*) from platform_raw.products", "select count(*) from marts.dim_products"),
    ("select count(*) from platform_raw.subscriptions", "select count(*) from marts.fct_subscriptions"),
    ("select count(*) from platform_raw.transfers", "select count(*) from marts.fct_transfers"),
    ("select count(*) from platform_raw.events__tickets", "select count(*) from marts.event_attendance"),
    (
        "select count(*) from platform_raw.event_attendees",
        "select sum(count_attendees) from marts.event_attendance",
    ),
    ("select count(distinct buyer__id) from platform_raw.sales", "select count(*) from marts.dim_customers"),
    (
        "select count(*) from platform_raw.lesson_comments",
        "select sum(count_comments) from marts.course_engagement",
    ),
    (
        "select count(*) from platform_raw.fiscal_documents",
        "select sum(count_documents) from marts.fiscal_documents_status",
    ),
)


def _pipeline(folder: Path) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name="platform_sync",
        destination=dlt.destinations.duckdb(str(folder / "warehouse.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(folder / "pipelines"),
    )


@pytest.mark.parametrize(
    ("seed", "scale"), [pytest.param(2, 600, id="seed2-600"), pytest.param(5, 2000, id="seed5-2000")]
)
def test_models_build_on_the_synced_sandbox(tmp_path: Path, seed: int, scale: int) -> None:
    pipeline = _pipeline(tmp_path)
    with running_sandbox(seed=seed, scale=scale, time_scale=TIME_SCALE) as sandbox:
        synced = sync(pipeline, source_options=source_options(sandbox, sandbox.token()))
    assert not synced.report.failed
    assert synced.rows["sales"] > 0

    result = run_models(pipeline, "build", target_path=tmp_path / "target", echo=False)
    assert result.success, result.output[-5000:]
    not_passing = [
        (n.unique_id, n.status, n.message)
        for n in result.nodes
        if n.status not in ("success", "pass") and not n.unique_id.startswith("exposure.")
    ]  # an exposure (the dashboard) is documentation: dbt lists it as no-op
    assert not_passing == []  # no warning either: the source fetched every sale it discovered

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:

        def one(sql: str) -> tuple:
            row = con.execute(sql).fetchone()
            assert row is not None
            return row

        # every raw row of the main tables reaches its mart, once
        for raw, mart in RAW_TO_MART:
            assert one(raw) == one(mart), (raw, mart)
        # the data exercises the rules the tests guard: refunds, subscriptions ended and active, MRR
        assert one("select count(*) from marts.fct_sales where is_refunded")[0] > 0
        assert one("select count(*) from marts.fct_subscriptions where ended_at is not null")[0] > 0
        assert one("select max(mrr_amount) from marts.subscriptions_mrr_monthly")[0] > 0
        assert one("select count(*) from marts.community_engagement")[0] > 0

    figures = headline_figures(pipeline)
    assert [title for title, _ in figures] == [
        "Revenue by month (paid sales, by payment month)",
        "Active subscriptions and MRR (latest month, to the newest change of a sale or subscription)",
        "Top products by net revenue (every paid sale found, all time)",
    ]
    assert all(len(rows) > 1 for _, rows in figures)


def test_models_build_on_a_drifting_sandbox(tmp_path: Path) -> None:
    """3% of the sandbox's records depart from the spec (issue 14): `dbt build` completes, every check
    that does not pass is a warning, the departures warning among them, and api_departures lists every
    resource, field path and kind the pipeline recorded."""
    pipeline = _pipeline(tmp_path)
    with running_sandbox(seed=3, scale=600, time_scale=TIME_SCALE, drift=0.03) as sandbox:
        # one pass: the models' "latest load" (assert_latest_load_sent_no_departures, api_departures's
        # is_in_latest_load) is the newest load, not the run's loads (a known gap: docs/contracts.md)
        options = source_options(sandbox, sandbox.token())
        synced = sync(pipeline, source_options=options, checkpoints=Checkpoints(0))
    assert not synced.report.failed

    result = run_models(pipeline, "build", target_path=tmp_path / "target", echo=False)
    assert result.success, result.output[-5000:]
    assert result.failed == []
    tests = [n for n in result.nodes if n.unique_id.startswith("test.")]
    assert {n.status for n in tests} == {"pass", "warn"}
    warned = {n.unique_id.split(".")[2] for n in tests if n.status == "warn"}
    assert "assert_latest_load_sent_no_departures" in warned
    # the models' JSON event counts the warnings (issue 51: it said only success or failed)
    verdict = result.verdict()
    assert verdict["build"] == "success" and verdict["failed"] == []
    assert {unique_id.split(".")[2] for unique_id in verdict["warned"]} == warned
    assert verdict["statuses"]["warn"] == len(verdict["warned"]) and sum(verdict["statuses"].values()) == len(
        result.nodes
    )

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        recorded = con.execute(
            "select distinct resource, field_path, kind from platform_raw._platform_departures order by all"
        ).fetchall()
        shown = con.execute(
            "select resource_name, field_path, departure_kind from marts.api_departures "
            "where is_in_latest_load order by all"
        ).fetchall()
        assert recorded and shown == recorded
        # every sale reaches fct_sales and every paid one the revenue by payment method, whatever its method
        assert (
            con.execute("select count(*) from platform_raw.sales").fetchone()
            == con.execute("select count(*) from marts.fct_sales").fetchone()
        )
        assert (
            con.execute("select count(*) from marts.fct_sales where was_paid").fetchone()
            == con.execute("select sum(count_paid_sales) from marts.sales_by_payment_method").fetchone()
        )


def _prices(world: SyntheticWorld) -> dict[str, tuple[float, str]]:
    """Price value and updatedAt of every subscription the world has, by id."""
    listing = world.subscriptions(None, None, "creation")
    return {s["id"]: (s["payment"]["price"]["value"], s["updatedAt"]) for s in listing.page(0, len(listing))}


def test_price_changes_between_two_builds_are_expansion_and_contraction(tmp_path: Path) -> None:
    """The sandbox's plans change price at a renewal now and then. Synced and built, then two months later
    synced and built again: each change the twin world says happened between the two is expansion or
    contraction of the month the API dated it (its updatedAt), for the subscriptions paying through
    that month; no other month moves, and the MRR's movements add up (dbt's own test)."""
    seed, scale, month = 2, 2000, 60 * 86400  # two months: a few changes in a world this size
    twin = SyntheticWorld(seed, scale)
    before = _prices(twin)
    twin.advance(month)
    after = _prices(twin)
    changed = {i: (before[i][0], price, updated) for i, (price, updated) in after.items() if i in before}
    changed = {i: change for i, change in changed.items() if change[0] != change[1]}
    assert changed, "some plan of this world changes its price within the month"

    pipeline = _pipeline(tmp_path)
    with running_sandbox(seed=seed, scale=scale, time_scale=TIME_SCALE) as sandbox:
        for moved in (0, month):
            sandbox.advance(moved)
            assert not sync(pipeline, source_options=source_options(sandbox, sandbox.token())).report.failed
            # dbt's tests on the second build only: the first's would judge a world the tests above
            # already judge (a third of this test's time), the second's judge the world that moved
            skipped = MODELS_ONLY if not moved else ()
            built = run_models(
                pipeline, "build", extra_args=skipped, target_path=tmp_path / "target", echo=False
            )
            assert built.success, built.output[-5000:]
    assert "assert_mrr_movements_add_up" in built.output

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        subscriptions = {
            row[0]: row[1:]
            for row in con.execute(
                "select subscription_id, currency, monthly_amount, is_paying, started_at, ended_at "
                "from marts.fct_subscriptions"
            ).fetchall()
        }
        movements = con.execute(
            "select month_start, currency, expansion_mrr_amount, contraction_mrr_amount "
            "from marts.subscriptions_mrr_monthly "
            "where expansion_mrr_amount > 0 or contraction_mrr_amount > 0"
        ).fetchall()

    expected: dict[tuple[date, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for subscription_id, (old_price, new_price, updated) in changed.items():
        currency, monthly_now, is_paying, started_at, ended_at = subscriptions[subscription_id]
        at = datetime.fromisoformat(updated.replace("Z", "+00:00"))
        month_start = date(at.year, at.month, 1)
        next_month = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
        through = started_at < datetime(at.year, at.month, 1, tzinfo=UTC) and (
            ended_at is None or ended_at >= next_month
        )
        if not (is_paying and through):
            continue
        delta = float(monthly_now) * (1 - old_price / new_price)  # the monthly amount's change
        expected[(month_start, currency)][0 if delta > 0 else 1] += abs(delta)
    assert expected, "some change falls on a subscription paying through its month"
    shown = {(row[0], row[1]): [float(row[2]), float(row[3])] for row in movements}
    assert shown.keys() == expected.keys()
    for key, (expansion, contraction) in expected.items():
        assert shown[key] == pytest.approx([expansion, contraction], abs=0.02), key
