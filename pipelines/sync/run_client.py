"""The destination's SQL client, made once for a sync's own statements.

`pipeline.sql_client()` resolves the destination's configuration and loads the schema from the working
folder each time it is called: about a tenth of a CPU-second in a small sync's folder, and a sync's own
statements called it a dozen times and more (after each pass: the orphans, the deletions; after the run:
the retired ids, the sales' verification and coverage). Measured 2026-12-07 on three syncs of the suite's
e2e world into one file: a quarter of their CPU (`tests/README.md`). `RunClient` makes it once per run;
each `with` still opens and closes its own connection, as before, so no connection is held across a
load and a statement that fails leaves the next one a fresh connection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dlt

# what `with sql() as client:` is called on: `pipeline.sql_client`, or a RunClient
SqlClients = Callable[[], Any]


class RunClient:
    """`pipeline.sql_client()`, made on first use and the same object after; `with run_client() as c:`."""

    def __init__(self, pipeline: dlt.Pipeline) -> None:
        self._pipeline = pipeline
        self._client: Any = None

    def __call__(self) -> Any:
        if self._client is None:  # a failure to make it is raised to the caller and tried again next time
            self._client = self._pipeline.sql_client()
        return self._client
