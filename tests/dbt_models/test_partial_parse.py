"""dbt's saved parse, reused by the next run into the same target folder (dbt's partial parsing, on by
default), keeps every singular test's severity when the raw schema changes between the two runs (one
account's dataset, then another's): the sources file reads it with `env_var`, so dbt parses that file
again, and until the warn-level tests said so in their own SQL files that second parse put them back at
the project's severity (error), so a warning of the first build failed the second."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.dbt.runner import DBT_PROJECT_DIR
from tests.support.dbt_parse import dbt_parse

pytestmark = pytest.mark.xdist_group("dbt_models_parse")


def _parse(target: Path, raw_schema: str) -> dict[str, str]:
    """`dbt parse` into `target` with the raw tables in `raw_schema`: each singular test's severity."""
    done = dbt_parse(target, target.parent, str(target.parent / "warehouse.duckdb"), raw_schema)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    nodes = json.loads((target / "manifest.json").read_text())["nodes"].values()
    return {
        n["name"]: str(n["config"]["severity"]).lower()  # dbt reads severities case-insensitively
        for n in nodes
        if n["resource_type"] == "test" and "assert_" in n["name"]
    }


# The API's own rules warn (the API breaks them when it sends a null or an unconvertible value); the
# reconciliations of the models' own logic fail (dbt_models/tests/_singular_tests.yml).
WARN = {
    "assert_refunded_sales_have_a_refund",
    "assert_sale_net_not_above_gross",
    "assert_paid_sales_have_paid_at",
    "assert_sale_amounts_in_sale_currency",
    "assert_attendee_ticket_belongs_to_event",
    "assert_sale_gross_decomposes",
    "assert_sale_gains_match_their_lists",
    "assert_latest_load_sent_no_departures",
}


def _declared() -> dict[str, str]:
    """Each singular test's severity: `warn` for WARN, the project's `error` for the others."""
    return {
        path.stem: "warn" if path.stem in WARN else "error"
        for path in (DBT_PROJECT_DIR / "tests").glob("assert_*.sql")
    }


def test_a_second_parse_with_another_raw_schema_keeps_each_singular_tests_severity(tmp_path: Path) -> None:
    target = tmp_path / "target"
    declared = _declared()
    assert WARN <= set(declared) and len(declared) > len(WARN)
    first = _parse(target, "platform_raw")
    assert {name: first[name] for name in declared} == declared
    assert (target / "partial_parse.msgpack").exists()  # the second run reuses it, not a parse of its own
    second = _parse(target, "platform_raw_acme")
    assert {name: second[name] for name in declared} == declared
