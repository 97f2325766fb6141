"""Records the sync marked deleted (`_platform_deleted_at`, issue 25): staging says so (`deleted_at`,
`is_deleted`), the marts leave them out. The small raw fixture, with one product (and so its campaigns
and partners), one affiliation, one transfer and one lesson comment marked; the same fixture unmarked
is the comparison."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dlt
import duckdb
import pytest

from pipelines.models import run_models
from tests.models import raw_fixture

pytestmark = pytest.mark.xdist_group("dbt_models_deletions")

MARKED = "timestamp with time zone '2026-05-29 00:00:00+00'"
TABLES = ("products", "product_campaigns", "product_partners", "affiliations", "transfers", "lesson_comments")


@dataclass
class Builds:
    marked: Path
    clean: Path
    product: str
    transfer: str
    comment: str
    affiliation: str


def _build(workdir: Path, name: str, statements: list[str]) -> Path:
    db = workdir / f"{name}.duckdb"
    raw_fixture.create_raw(db, statements=statements)
    pipeline = dlt.pipeline(
        pipeline_name=f"models_{name}",
        destination=dlt.destinations.duckdb(str(db)),
        dataset_name=raw_fixture.RAW_SCHEMA,
        pipelines_dir=str(workdir / "pipelines"),
    )
    result = run_models(pipeline, "build", target_path=workdir / f"target_{name}", echo=False)
    assert result.success, result.output[-2000:]
    return db


def _query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Builds]:
    workdir = tmp_path_factory.mktemp("deletions")
    tables = raw_fixture.flatten(raw_fixture.records())
    first = {
        t: str(tables[t]["rows"][0]["id"])
        for t in ("products", "transfers", "lesson_comments", "affiliations")
    }
    columns = [
        f"alter table {{raw}}.{t} add column _platform_deleted_at timestamp with time zone" for t in TABLES
    ]
    marks = [
        f"update {{raw}}.{t} set _platform_deleted_at = {MARKED} where cast(id as varchar) = '{first[t]}'"
        for t in ("products", "transfers", "lesson_comments", "affiliations")
    ] + [
        f"update {{raw}}.{t} set _platform_deleted_at = {MARKED} "
        f"where cast(product_id as varchar) = '{first['products']}'"
        for t in ("product_campaigns", "product_partners")
    ]
    yield Builds(
        marked=_build(workdir, "marked", columns + marks),
        clean=_build(workdir, "clean", columns),
        product=first["products"],
        transfer=first["transfers"],
        comment=first["lesson_comments"],
        affiliation=first["affiliations"],
    )


def test_staging_exposes_the_flag_on_exactly_the_marked_rows(builds: Builds) -> None:
    flagged = {
        model: _query(builds.marked, f"select {key}, deleted_at from staging.{model} where is_deleted")
        for model, key in (
            ("stg_platform__products", "product_id"),
            ("stg_platform__transfers", "transfer_id"),
        )
    }
    when = _query(builds.marked, f"select {MARKED}")[0][0]
    assert flagged == {
        "stg_platform__products": [(builds.product, when)],
        "stg_platform__transfers": [(builds.transfer, when)],
    }
    assert _query(builds.clean, "select count(*) from staging.stg_platform__products where is_deleted") == [
        (0,)
    ]
    children = _query(
        builds.marked,
        "select distinct product_id from staging.stg_platform__product_campaigns where is_deleted",
    )
    assert children in ([(builds.product,)], [])  # the fixture may give that product no campaign


def test_marts_leave_deleted_records_out(builds: Builds) -> None:
    def ids(db: Path, sql: str) -> set[str]:
        return {str(row[0]) for row in _query(db, sql)}

    products = "select product_id from marts.dim_products"
    assert ids(builds.clean, products) - ids(builds.marked, products) == {builds.product}
    assert ids(builds.marked, products) < ids(builds.clean, products)
    transfers = "select transfer_id from marts.fct_transfers"
    assert ids(builds.clean, transfers) - ids(builds.marked, transfers) == {builds.transfer}
    assert ids(builds.marked, transfers) == ids(builds.clean, transfers) - {builds.transfer}
