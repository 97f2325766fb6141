"""The envelope as tolerant as the records (issue 48): a server that writes its paged envelopes loosely,
as ours never does (`loose_envelope` in sandbox/faults.py: numbers as text, a `nextPage` link, `pages` and
`totalItems` left out of every even page, one page more announced than there is). Before, every such list
failed on every run after six tries ("pages is '10', not a non-negative whole number") and its table never
loaded. Every paged list of the spec served so at once: the warehouse equals the reference."""

from __future__ import annotations

from pathlib import Path

from sandbox.running import SandboxHandle
from sources.platform_client.operations import OPERATIONS
from tests.support.faults import Reference, database_of, pipeline_in, run
from tests.support.warehouses import assert_exact

PAGED = sorted(operation.name for operation in OPERATIONS if operation.paged)


def test_every_paged_list_served_with_loose_envelopes_loads_exactly(
    tmp_path: Path, sandbox: SandboxHandle, reference: Reference
) -> None:
    assert len(PAGED) == 9
    sandbox.set_faults("loose_envelope=" + "+".join(PAGED))
    sandbox.reset_stats()
    pipeline = pipeline_in(tmp_path)
    result = run(pipeline, sandbox)
    assert result.report.failed == {} and result.report.skipped == {}, result.report.failed
    assert sandbox.stats()["faults"].get("loose_envelope", 0) > 0
    assert_exact(database_of(pipeline), reference.database)
