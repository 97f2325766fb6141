"""`forget` and the departures (issue 49: departures found as the tables are): an original value of a
personal field (the field at its path in the resource's model) in a record naming the person is blanked
with the record's own columns; a value that is the person's is blanked wherever it departed; nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import duckdb

from pipelines.commands.forget import forget, wanted
from sources.platform.privacy import parse_privacy


def _value(value: str, record_id: str | None) -> dict[str, Any]:
    return {"value": value, "record_id": record_id, "records": 1}


def test_the_departed_values_of_the_persons_records_are_blanked(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    pipeline = dlt.pipeline(
        "forget_departures",
        destination=dlt.destinations.duckdb(str(warehouse)),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    sales = [
        {"id": "s1", "buyer": {"email": "ana@example.com", "name": "Ana"}, "producer": {"name": "Seller"}},
        {"id": "s2", "buyer": {"email": "bia@example.com", "name": "Bia"}, "producer": {"name": "Seller"}},
    ]
    pipeline.run(sales, table_name="sales")
    departures = [
        {"resource": "sales", "field_path": "producer.name", "kind": "unconvertible", "records": 2,
         "values": [_value("Seller One", "s1"), _value("Seller Two", "s2")]},
        {"resource": "sales", "field_path": "product.name", "kind": "unconvertible", "records": 1,
         "values": [_value("Course 12", "s1")]},
        {"resource": "products", "field_path": "name", "kind": "unconvertible", "records": 1,
         "values": [_value("Course 13", "s1")]},
        {"resource": "transfers", "field_path": "email", "kind": "unconvertible", "records": 1,
         "values": [_value(" ANA@example.com", "t9")]},
    ]  # fmt: skip
    pipeline.run(departures, table_name="_platform_departures")
    settings = parse_privacy({}, None)

    result = forget(pipeline, settings, wanted(settings, "ana@example.com", None), None)

    assert result.rows["platform_raw.sales"] == 1
    assert result.rows["platform_raw._platform_departures__values"] == 2
    with duckdb.connect(str(warehouse), read_only=True) as con:
        left = con.execute(
            "select d.resource, d.field_path, v.record_id, v.value from platform_raw._platform_departures d "
            "join platform_raw._platform_departures__values v on v._dlt_parent_id = d._dlt_id order by all"
        ).fetchall()
        buyers = con.execute(
            "select id, buyer__email, buyer__name, producer__name from platform_raw.sales order by id"
        )
        assert buyers.fetchall() == [("s1", None, None, None), ("s2", "bia@example.com", "Bia", "Seller")]
    assert left == [
        ("products", "name", "s1", "Course 13"),  # another resource's record of the same id: not hers
        ("sales", "producer.name", "s1", None),  # a name on her sale
        ("sales", "producer.name", "s2", "Seller Two"),
        ("sales", "product.name", "s1", "Course 12"),  # not a person's field
        ("transfers", "email", "t9", None),  # her value, wherever it departed
    ]
