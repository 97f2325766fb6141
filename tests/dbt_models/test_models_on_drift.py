"""The dbt project on data from an API that departs from its spec (issue 14), built from drift_fixture.py.

`dbt build` completes with warnings, not errors; a payment method the spec does not list is a row of its
own with its exact revenue; a status the spec does not list is neither paid nor refunded; the pivots still
add up; api_departures shows what the pipeline recorded, with first and last sightings and the values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import dlt
import duckdb
import pytest

from pipelines.dbt.runner import ModelsResult, run_models
from tests.support import drift_fixture, raw_fixture

pytestmark = pytest.mark.xdist_group("dbt_models_drift")

# Every test that does not pass on the drifted fixture, and why: all warnings, none an error.
EXPECTED_WARNINGS = {
    "accepted_values_stg_platform__sales_payment_method",  # applePay
    "accepted_values_stg_platform__sales_sale_status",  # chargeback
    "not_null_stg_platform__sales_product_id",  # 1009 has no product id
    "not_null_fct_sales_product_id",
    "assert_latest_load_sent_no_departures",  # the latest load recorded departures and quarantined two
}


@dataclass
class Built:
    db: Path
    result: ModelsResult


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    workdir = tmp_path_factory.mktemp("drifted")
    db = workdir / "warehouse.duckdb"  # the name dbt's saved parse was made for (dbt_parse.py)
    drift_fixture.create_raw(db)
    pipeline = dlt.pipeline(
        pipeline_name="models_drifted",
        destination=dlt.destinations.duckdb(str(db)),
        dataset_name=raw_fixture.RAW_SCHEMA,
        pipelines_dir=str(workdir / "pipelines"),
    )
    yield Built(db, run_models(pipeline, "build", target_path=workdir / "target", echo=False))


def _query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def _name(unique_id: str) -> str:
    """`test.platform_sync.not_null_x_y.27a0ac42c2` -> `not_null_x_y` (accepted_values' args cut off)."""
    return unique_id.split(".")[2].split("___var_")[0]


def test_build_completes_with_warnings_only(drifted: Built) -> None:
    result = drifted.result
    assert result.success, result.output[-5000:]
    assert result.failed == []
    not_passing = {
        _name(n.unique_id): n.status
        for n in result.nodes
        if n.unique_id.startswith("test.") and n.status not in ("success", "pass")
    }
    assert not_passing == dict.fromkeys(EXPECTED_WARNINGS, "warn")
    # the pivots' sums and the reconciliations ran and passed on the drifted rows
    statuses = {_name(n.unique_id): n.status for n in result.nodes}
    for check in (
        "daily_sales_overview_paid_counts_by_method_add_up",
        "daily_sales_overview_gross_by_method_adds_up",
        "assert_daily_overview_reconciles_with_sales",
        "assert_sales_by_payment_method_reconciles",
        "assert_cash_flow_reconciles",
    ):
        assert statuses[check] == "pass", check


def test_a_new_payment_method_is_its_own_row(drifted: Built) -> None:
    d = Decimal
    rows = _query(
        drifted.db,
        "select sales_date, payment_method, is_listed_method, count_paid_sales, gross_amount, "
        "net_revenue_amount from marts.sales_by_payment_method order by sales_date, payment_method",
    )
    assert rows == [
        (date(2026, 3, 5), "creditCard", True, 2, d(120), d(96)),
        (date(2026, 3, 20), "pix", True, 1, d(200), d(0)),
        (date(2026, 4, 5), "creditCard", True, 1, d(100), d(50)),
        (date(2026, 4, 6), "applePay", False, 1, d(150), d(120)),  # 1007, as the API named it
        (date(2026, 4, 6), None, False, 1, d(100), d(80)),  # 1009: the API sent no payment
    ]
    day = _query(
        drifted.db,
        "select count_sales, count_paid_sales, gross_amount, count_paid_credit_card, "
        "count_paid_unlisted_method, gross_amount_unlisted_method from marts.daily_sales_overview "
        "where sales_date = date '2026-04-06'",
    )
    assert day == [(2, 2, d(250), 0, 2, d(250))]


def test_an_unlisted_status_is_neither_paid_nor_refunded(drifted: Built) -> None:
    rows = _query(
        drifted.db,
        "select sale_id, sale_status, payment_method, product_id, was_paid, is_refunded, "
        "net_revenue_amount from marts.fct_sales where sale_id in ('1007', '1008', '1009') order by 1",
    )
    assert rows == [
        ("1007", "paid", "applePay", "P1", True, False, Decimal(120)),
        ("1008", "chargeback", "creditCard", "P1", False, False, Decimal(0)),
        ("1009", "paid", None, None, True, False, Decimal(80)),
    ]


def test_api_departures_shows_what_the_api_sent(drifted: Built) -> None:
    latest = drift_fixture.load_time(raw_fixture.LOAD_ID)
    older = drift_fixture.load_time(drift_fixture.OLDER_LOAD_ID)
    rows = _query(
        drifted.db,
        "select resource_name, field_path, departure_kind, first_seen_at, last_seen_at, last_load_id, "
        "count_loads, count_records_last_load, example_record_id, is_in_latest_load, "
        "count_unlisted_values, unlisted_values from marts.api_departures "
        "order by field_path, departure_kind",
    )
    load = raw_fixture.LOAD_ID
    assert rows == [
        (
            "sales",
            "items[].unitValue.value",
            "unconvertible",
            latest,
            latest,
            load,
            1,
            1,
            "1007",
            True,
            0,
            None,
        ),
        ("sales", "payment", "null", latest, latest, load, 1, 1, "1009", True, 0, None),
        (
            "sales",
            "payment.method",
            "unlisted_value",
            older,
            latest,
            load,
            2,
            1,
            "1007",
            True,
            2,
            "applePay, pixAutomatico",
        ),
        ("sales", "product.id", "null", latest, latest, load, 1, 1, "1009", True, 0, None),
        ("sales", "status", "unlisted_value", latest, latest, load, 1, 1, "1008", True, 1, "chargeback"),
    ]
    assert _query(
        drifted.db,
        "select resource_name, quarantine_reason, record_id from staging.stg_platform__quarantine order by 2",
    ) == [("sales", "key of the wrong shape", "[1]"), ("sales", "no primary key", None)]
    assert _query(
        drifted.db,
        "select departed_value, record_id from staging.stg_platform__departure_values "
        "where departure_kind = 'unconvertible'",
    ) == [("12,50", "1007")]


def test_departures_warning_names_each_departure(drifted: Built) -> None:
    [node] = [n for n in drifted.result.nodes if "assert_latest_load_sent_no_departures" in n.unique_id]
    assert node.failures == 5 + 2  # five departures of the latest load, two quarantined records
