"""Fiscal documents follow their sales: a sale found changed has its documents read again, whatever their age.

`sales` compares each known sale it fetches with its loaded row (`SaleLedger.changed`); at its end it
adds the changed ids to the `fiscal_documents` resource state (`DUE_KEY`), so they are never lost: dlt
commits that state with the run's rows. `fiscal_documents`, once its own windows are read, waits for
`sales` to finish (when it runs in the same extract), then reads the documents of every due sale by the
list's `saleId` filter and removes each from the state once its pages were handed to dlt. A sale whose
documents could not be read (a failed request, `fiscal_documents` not selected) stays due for the next
run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import dlt

DUE_KEY = "sales_to_reread"  # in the `fiscal_documents` resource state: newline-separated sale ids
FISCAL_DOCUMENTS = "fiscal_documents"


class DocumentFollowUps:
    """The hand-off of changed sale ids from `sales` to `fiscal_documents`, through the latter's state."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._closed = False

    def close(self, changed: Iterable[str]) -> None:
        """`sales` is done: its changed sale ids join those due (in the state, for this run or the next)."""
        with self._changed:
            if fresh := {str(i) for i in changed}:
                state = _documents_state()
                state[DUE_KEY] = _joined(_split(state.get(DUE_KEY)) | fresh)
            self._closed = True
            self._changed.notify_all()

    def wait_for_sales(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._closed)

    def due(self) -> list[str]:
        """The sale ids whose documents are to be read again, sorted."""
        with self._changed:
            return sorted(_split(_documents_state().get(DUE_KEY)))

    def done(self, sale_id: str) -> None:
        """The documents of `sale_id` were handed to dlt: it is due no more."""
        with self._changed:
            state = _documents_state()
            state[DUE_KEY] = _joined(_split(state.get(DUE_KEY)) - {sale_id})


def _documents_state() -> dict[str, Any]:
    resources = dlt.current.source_state().setdefault("resources", {})
    state: dict[str, Any] = resources.setdefault(FISCAL_DOCUMENTS, {})
    return state


def _split(value: Any) -> set[str]:
    return {item for item in str(value or "").split("\n") if item}


def _joined(ids: set[str]) -> str:
    return "\n".join(sorted(ids))
