"""Pages decoded by a helper process load the same warehouse and state as pages decoded in the sync's
own process, and the helpers are gone when the extract ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import pytest

from pipelines.sync.checkpoints import Checkpoints
from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from sources.platform.fastpath import offload
from sources.platform.fastpath.offload import PageDecoder
from sources.platform.resources.store_sales import RUN_STARTED_KEY
from tests.support.sync_helpers import E2E_SCALE, E2E_TIME_SCALE, source_options, warehouse_tables

# Small pages, so that the flat lists of the small e2e world span many pages.
ITEMS_PER_PAGE = 7


def _sync(tmp_path: Path, sandbox: Any, token: str, name: str, decode_workers: int) -> dlt.Pipeline:
    pipeline = dlt.pipeline(
        pipeline_name=f"platform_sync_{name}",
        destination=dlt.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    options = source_options(sandbox, token, items_per_page=ITEMS_PER_PAGE, decode_workers=decode_workers)
    # one pass: the departures rows are per load, and which pass meets which sale differs between runs
    result = sync(pipeline, source_options=options, checkpoints=Checkpoints(0))
    assert not result.report.failed, result.report.failed
    return pipeline


def _resource_states(pipeline: dlt.Pipeline) -> dict[str, Any]:
    """The resources' states, without the start of the run that read sales (a time of the run, not a
    position in the data: `sales.RUN_STARTED_KEY`)."""
    states = dict(pipeline.state["sources"]["platform"]["resources"])  # type: ignore[typeddict-item]
    if "sales" in states:
        states["sales"] = {k: v for k, v in states["sales"].items() if k != RUN_STARTED_KEY}
    return states


def _keep_decoders(monkeypatch: pytest.MonkeyPatch) -> list[PageDecoder]:
    monkeypatch.setattr(offload, "OFFLOAD_FROM_PAGE", 2)  # every page after a walk's first
    decoders: list[PageDecoder] = []
    made = PageDecoder.__init__

    def keep(self: PageDecoder, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        decoders.append(self)

    monkeypatch.setattr(PageDecoder, "__init__", keep)
    return decoders


def test_pages_decoded_by_a_helper_load_the_same_rows_and_state(
    sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoders = _keep_decoders(monkeypatch)
    token = sandbox.token()
    here = _sync(tmp_path, sandbox, token, "here", decode_workers=0)
    assert decoders == []
    helped = _sync(tmp_path, sandbox, token, "helped", decode_workers=1)

    decoder = decoders[0]  # the first pass's; a run in passes has one per pass (the later ones: sales by id)
    assert decoder.decoded_pages > 20  # fiscal documents, lesson comments, transfers, ... after page 1
    assert all(d.running_helpers == 0 for d in decoders)  # stopped when the last resource finished
    tables_here = warehouse_tables(str(tmp_path / "here.duckdb"))
    tables_helped = warehouse_tables(str(tmp_path / "helped.duckdb"))
    assert tables_helped.keys() == tables_here.keys()
    for table, (columns, rows) in tables_here.items():
        assert tables_helped[table] == (columns, rows), table
    assert len(tables_here["fiscal_documents"][1]) > 3 * ITEMS_PER_PAGE
    # The cursors (fiscal documents' newest emission date and its ids) and the sale ids handed to
    # `sales` come out the same from tables as from rows.
    assert _resource_states(helped) == _resource_states(here)
    assert _resource_states(here)["fiscal_documents"]["emission_date"]["ids"]


def test_pages_that_depart_from_the_spec_load_alike_in_a_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half of the records depart, some in the fiscal documents' cursor field (`emissionDate`): the
    helper sends those rows back apart from its table, and the cursor ends where this process leaves it."""
    decoders = _keep_decoders(monkeypatch)
    with running_sandbox(seed=6, scale=E2E_SCALE, time_scale=E2E_TIME_SCALE, drift=0.5) as drifting:
        token = drifting.token()
        here = _sync(tmp_path, drifting, token, "here", decode_workers=0)
        helped = _sync(tmp_path, drifting, token, "helped", decode_workers=1)
        cursor_departures = [d for d in drifting.departures() if d["path"] == "document.emissionDate"]
    assert len(cursor_departures) >= 5
    decoder = decoders[0]  # the first pass's (one per pass)
    assert decoder.decoded_pages > 20
    tables_here = warehouse_tables(str(tmp_path / "here.duckdb"))
    tables_helped = warehouse_tables(str(tmp_path / "helped.duckdb"))
    assert tables_helped.keys() == tables_here.keys()
    for table, (columns, rows) in tables_here.items():
        if table == "_platform_departures":  # the example record is the first met, in either order
            rows, helped_rows = (
                _without(columns, rows, "example_record_id"),
                _without(columns, tables_helped[table][1], "example_record_id"),
            )
            assert helped_rows == rows
            continue
        assert tables_helped[table] == (columns, rows), table
    assert _resource_states(helped) == _resource_states(here)


def _without(
    columns: list[tuple[str, str, str]], rows: list[tuple[Any, ...]], name: str
) -> list[tuple[Any, ...]]:
    at = [column[0] for column in columns if not column[0].startswith("_dlt_")].index(name)
    return sorted(row[:at] + row[at + 1 :] for row in rows)
