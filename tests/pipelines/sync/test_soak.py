"""Exact on day twenty (issue 25): daily scheduled syncs against the unruly world, then a fresh one.

One soak (`bench.soak.run_soak`, module scope): 21 daily runs of the real pipeline against the unruly
sandbox world (docs/contracts.md part 2: deletions, late chargebacks, late slips, future `updatedAt`,
renewals before `updatedAt`, `-03:00` timestamps), then a full sync of the final world into another
DuckDB. Every raw table is compared record by record (`bench.soak_compare`). What may differ is computed
here from the settings and from a twin of the world, never from the warehouses' figures:

- no record missing, none duplicated;
- a record the platform deleted is in the warehouse flagged (`_platform_deleted_at`), exactly the
  records the world deleted (its plan, read from the twin), and no live record is flagged;
- stale values only in `sales` (and the fiscal documents of those sales), and only for a sale whose
  change came after the start of the run `cycle` runs before the last, where `cycle =
  ceil(known sales / ceil(sales_reverify_share x sales_max_requests))` (contracts part 3).

Selected with `-m soak` (`-m "not soak"` leaves it out); 3.5 minutes measured on the shared two-core
machine under load (21 syncs of about 9 s and the reference).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bench.soak import SoakResult, SoakSettings, run_soak
from bench.soak_compare import TableDivergence, divergence, stale_fields
from sandbox.world.clock import iso, to_ms
from sandbox.world.unruly import UnrulyWorld

# One soak for the module: under `--dist loadgroup` (make unit) its tests stay in one worker.
pytestmark = [pytest.mark.soak, pytest.mark.xdist_group("soak"), pytest.mark.timeout(1200)]

SETTINGS = SoakSettings(seed=1, scale=200, days=20, sales_max_requests=100, sales_reverify_share=0.5)


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> SoakResult:
    return run_soak(SETTINGS, tmp_path_factory.mktemp("soak"))


@pytest.fixture(scope="module")
def diverged(soak: SoakResult) -> dict[str, TableDivergence]:
    return divergence(soak.scheduled, soak.reference)


@pytest.fixture(scope="module")
def twin(soak: SoakResult) -> UnrulyWorld:
    """The sandbox's world, moved to the clock of the last run: what was deleted, charged back, paid."""
    world = UnrulyWorld(SETTINGS.seed, SETTINGS.scale)
    world.advance((to_ms(datetime.fromisoformat(soak.runs[-1].clock)) - world.now) / 1000)
    return world


def rows(path: str, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(path, read_only=True) as connection:
        return connection.execute(sql).fetchall()


def expected_deletions(world: UnrulyWorld) -> dict[str, list[str]]:
    """Record keys of every record the world deleted by its clock, per raw table."""
    plan, now = world.unruly, world.now
    products = [world.catalog_.by_id[pid] for pid, at in plan.deleted_products.items() if at <= now]
    affiliations = {a for a, at in plan.deleted_affiliations.items() if at <= now}
    for product in products:
        affiliations |= {a["id"] for a in world.catalog_.extras(product).affiliations}
    extras = [world.catalog_.extras(p) for p in products]
    return {
        "products": sorted(p.id for p in products),
        "product_campaigns": sorted(f"{p.id}/{c['id']}" for p in extras for c in p.campaigns),
        "product_partners": sorted(f"{p.id}/{c['id']}" for p in extras for c in p.partners),
        "affiliations": sorted(affiliations),
        "transfers": sorted(t for t, at in plan.deleted_transfers.items() if at <= now),
        "lesson_comments": sorted(str(c) for c, at in plan.deleted_comments.items() if at <= now),
    }


def cycle_start(soak: SoakResult) -> str:
    """The clock of the run `cycle` runs before the last: a change after it may still wait."""
    known = len(rows(soak.reference, "select id from platform_raw.sales"))
    cycle = SETTINGS.cycle_runs(known)
    assert 1 <= cycle < len(soak.runs), "the settings must make the cycle shorter than the soak"
    return soak.runs[-cycle].clock


def test_every_scheduled_run_completes(soak):
    assert len(soak.runs) == SETTINGS.days + 1
    assert [(r.failed, r.skipped) for r in soak.runs] == [({}, {})] * len(soak.runs)


def test_no_record_is_missing_or_duplicated(diverged):
    assert {t: d.missing[:5] for t, d in diverged.items() if d.missing} == {}
    assert {t: d.duplicated[:5] for t, d in diverged.items() if d.duplicated} == {}


def test_deleted_records_are_flagged_not_dropped_and_live_ones_are_not(diverged, twin):
    assert {t: d.ghosts_unflagged for t, d in diverged.items() if d.ghosts_unflagged} == {}
    assert {t: d.flagged_alive for t, d in diverged.items() if d.flagged_alive} == {}
    expected = expected_deletions(twin)
    assert all(expected.values()), "the soak lasts long enough for each kind of deletion"
    flagged = {t: d.ghosts_flagged for t, d in diverged.items() if d.ghosts_flagged}
    assert flagged == expected


def test_stale_values_only_within_the_promised_cycle(soak, diverged):
    since = cycle_start(soak)
    changed_since = {
        sale_id
        for sale_id, updated in rows(soak.reference, "select id, updated_at from platform_raw.sales")
        if updated is not None and iso(to_ms(updated)) > since
    }
    documents_since = {
        doc
        for doc, sale in rows(
            soak.reference, "select document__id, sale__id from platform_raw.fiscal_documents"
        )
        if sale in changed_since
    }
    allowed = {"sales": changed_since, "fiscal_documents": documents_since}
    beyond = {
        table: {key: stale_fields(soak.scheduled, soak.reference, table, key) for key in d.stale[:3]}
        for table, d in diverged.items()
        if set(d.stale) - allowed.get(table, set())
    }
    assert beyond == {}


def test_the_unruly_sales_moves_reached_the_warehouse(soak, twin):
    """Chargebacks and late slips older than the cycle: the sale at its new status, the chargeback's
    fiscal document cancelled (the world's plan says which sales, the twin their status)."""
    since = to_ms(datetime.fromisoformat(cycle_start(soak)))
    plan = twin.unruly
    moved = {i: at for i, at in {**plan.chargebacks, **plan.late_slips}.items() if at <= since}
    assert moved, "some of the moves are older than the cycle"
    ids = {twin.sales.sale_id(i): twin.sale(twin.sales.sale_id(i))["status"] for i in moved}
    loaded = dict(rows(soak.scheduled, "select id, status from platform_raw.sales"))
    assert {i: loaded.get(i) for i in ids} == ids
    charged = [twin.sales.sale_id(i) for i in moved if i in plan.chargebacks]
    documents = dict(
        rows(soak.scheduled, "select sale__id, document__status from platform_raw.fiscal_documents")
    )
    assert {i: documents.get(i) for i in charged} == dict.fromkeys(charged, "canceled")


def test_requests_per_run_are_recorded(soak):
    """Every run's requests (what the bench section reports) come from the sandbox's own count."""
    assert all(
        run.requests == sum(n for o, n in run.by_operation.items() if o != "token_exchange")
        for run in soak.runs
    )
    assert all(run.requests > 0 for run in soak.runs) and soak.reference_requests > 0
    assert Path(soak.scheduled).exists() and Path(soak.reference).exists()
