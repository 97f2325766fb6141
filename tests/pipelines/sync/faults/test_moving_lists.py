"""A list that moves while it is paged (issue 26): with the sandbox's `reorder` fault, the first record of
every paged listing moves to its end when a walk first asks for its second page, so one record crosses
back over the page boundary the walk has passed and another comes twice. The walk notices (a record came
twice), reads the list again, and no record is lost or loaded twice: the run itself holds every record of
the reference with no duplicate key, and the rerun ends exact (docs/reliability.md)."""

from __future__ import annotations

from pathlib import Path

from tests.support.faults import Reference, database_of, pipeline_in, rerun_clean, run, world
from tests.support.warehouses import integrity_problems, rows_by_record

# Small pages, so that the lists of the small world have several (the reference reads them in pages of
# 100; the rows do not depend on the page size).
ITEMS_PER_PAGE = 5


def test_lists_reordering_during_the_walk_lose_no_record_then_exact_after_rerun(
    tmp_path: Path, reference: Reference
) -> None:
    with world() as sandbox:
        pipeline = pipeline_in(tmp_path)
        sandbox.set_faults("reorder=1")
        result = run(pipeline, sandbox, items_per_page=ITEMS_PER_PAGE)
        moves = sandbox.stats()["faults"].get("reorder", 0)
        assert moves >= 10, f"only {moves} listings moved"
        assert result.report.failed == {}, result.report.failed
        faulty = rows_by_record(database_of(pipeline))
        clean = rows_by_record(reference.database)
        missing = {table: sorted(set(clean[table]) - set(faulty.get(table, {}))) for table in clean}
        assert {table: keys for table, keys in missing.items() if keys} == {}
        assert integrity_problems(database_of(pipeline)) == []
        rerun_clean(pipeline, sandbox, reference)
