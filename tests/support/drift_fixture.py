"""The raw fixture as an API that departs from its spec leaves it (issue 14), for
tests/dbt_models/test_models_on_drift.py.

Three more sales, loaded as the tolerant source loads them: 1007 paid with a payment method the spec
does not list (`applePay`), 1008 in a status the spec does not list (`chargeback`, never paid), 1009 paid
with a null `payment` object and a null product id. Beside them, the tables the pipeline writes about
such records: `_platform_departures` (with `_platform_departures__values`) for the latest load and for
an older one, and `_platform_quarantine`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support import raw_fixture
from tests.support.raw_fixture import money, ts

OLDER_LOAD_ID = "1779000000.000000"  # eleven days before raw_fixture.LOAD_ID


def load_time(load_id: str) -> datetime:
    """A dlt load id is the load's start as a unix timestamp."""
    return datetime.fromtimestamp(float(load_id), tz=UTC)


def _drifted_sales() -> list[dict[str, Any]]:
    buyer = {"id": "B4", "name": "Dora", "email": "dora@example.com", "document": "444", "phone": "5514"}
    amounts = {
        "grossGain": money("150.00"),
        "netGain": money("120.00"),
        "fee": money("29.00"),
        "total": money("150.00"),
        "totalInterest": money("150.00"),
    }
    new_method = raw_fixture.sale(
        "1007",
        **amounts,
        payment={"method": "applePay", "detail": "unknown", "link": None},
        createdAt=ts("2026-04-06T09:00:00"),
        updatedAt=ts("2026-04-06T10:00:00"),
        paidAt=ts("2026-04-06T10:00:00"),
        creditDate=ts("2026-05-06T00:00:00"),
        buyer={**raw_fixture.sale("x")["buyer"], **buyer},
    )
    new_status = raw_fixture.sale(
        "1008",
        status="chargeback",
        createdAt=ts("2026-04-07T09:00:00"),
        updatedAt=ts("2026-04-08T10:00:00"),
        paidAt=None,
        creditDate=None,
        buyer={**raw_fixture.sale("x")["buyer"], **buyer},
    )
    nulls = raw_fixture.sale(
        "1009",
        payment=None,
        createdAt=ts("2026-04-06T11:00:00"),
        updatedAt=ts("2026-04-06T12:00:00"),
        paidAt=ts("2026-04-06T12:00:00"),
        creditDate=ts("2026-05-06T00:00:00"),
        buyer={**raw_fixture.sale("x")["buyer"], **buyer},
    )
    nulls["product"]["id"] = None
    for record in (new_method, new_status, nulls):
        record["items"][0]["id"] = f"{record['id']}-1"
    return [new_method, new_status, nulls]


def _departure(field_path: str, kind: str, example: str, values: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resource": "sales",
        "field_path": field_path,
        "kind": kind,
        "records": 1,
        "example_record_id": example,
        "values": values,
    }


def records() -> dict[str, list[dict[str, Any]]]:
    """raw_fixture's records plus the drifted sales and what the pipeline recorded about them."""
    data = raw_fixture.records()
    data["sales"] += _drifted_sales()
    data["_platform_departures"] = [
        _departure("payment.method", "unlisted_value", "1007", [{"value": "applePay", "records": 1}]),
        _departure("status", "unlisted_value", "1008", [{"value": "chargeback", "records": 1}]),
        _departure("payment", "null", "1009", []),
        _departure("product.id", "null", "1009", []),
        _departure(
            "items[].unitValue.value",
            "unconvertible",
            "1007",
            [{"value": "12,50", "record_id": "1007", "records": 1}],
        ),
    ]
    data["_platform_quarantine"] = [
        {"resource": "sales", "reason": "no primary key", "record_id": None, "raw_json": '{"a": 1}'},
        {
            "resource": "sales",
            "reason": "key of the wrong shape",
            "record_id": "[1]",
            "raw_json": '{"id": [1]}',
        },
    ]
    return data


# An older load recorded another unlisted payment method: api_departures keeps its first sighting.
OLDER_LOAD = [
    "insert into {raw}._platform_departures (resource, field_path, kind, records, example_record_id, "
    f"_dlt_load_id, _dlt_id) values ('sales', 'payment.method', 'unlisted_value', 3, '0999', "
    f"'{OLDER_LOAD_ID}', 'older1')",
    "insert into {raw}._platform_departures__values (value, records, _dlt_parent_id, _dlt_list_idx, "
    "_dlt_id, _dlt_root_id) values ('pixAutomatico', 3, 'older1', 0, 'older1v', 'older1')",
    f"insert into {{raw}}._dlt_loads values ('{OLDER_LOAD_ID}', 'platform', 0, "
    "timestamptz '2026-05-17 06:41:00+00', 'h')",
]


def create_raw(db_path: str | Path) -> None:
    raw_fixture.create_raw(db_path, records(), statements=OLDER_LOAD)
