"""What a resource is: one declaration (`Stream`) per resource, written in the module of its API area.

A declaration carries everything the source needs to make it a dlt resource (`sources/platform/__init__.py`):
its operation, model, key, write disposition, how it stays up to date (`full_scan`, `fans_out`: see
`rescan.py`; the others keep an incremental cursor in their reader), its reader and the sale ids it
discovers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from sources.platform.fastpath.batches import Batch
from sources.platform.fastpath.columnar import Layout, columnar_layout

WriteDisposition = Literal["merge", "replace", "append"]


# What the readers share (`context.SourceContext`): a parameter here, so that the declaration sits below
# the context that uses it.
Ctx = TypeVar("Ctx")
Reader = Callable[[Ctx, "Stream[Ctx]"], Iterator[Batch]]


@dataclass(frozen=True)
class Stream(Generic[Ctx]):
    """One resource: the operation that reads it, the model of its records, its table's key and write
    disposition, how it stays up to date, the reader that walks it and where its rows name sales."""

    name: str
    operation: str
    model: type[BaseModel]
    primary_key: tuple[str, ...]
    write_disposition: WriteDisposition
    # Walks the API and yields one batch per page (`context.SourceContext` gives it the client).
    read: Reader[Ctx] = field(repr=False)
    # Columns the reader adds to each record (its parent's id, a snapshot time), with their dlt hints.
    extra_columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    # Where this resource's records name a sale (API keys): those ids go to `sales` (`store_sale_ids.py`).
    sale_ids_at: tuple[str, ...] = ()
    # Read whole each time (the API has no update filter): as often as its cost, its operation's rate
    # and the interval between runs allow (`scan_budget.py`).
    full_scan: bool = False
    # One request per parent (product, event, student, delivery, community): its cost grows with the
    # parents, and the budget decides like for a whole list.
    fans_out: bool = False
    # Of two rows of one record in one load (a list that moved while it was read, a record changed
    # between two windows), the one with the highest value here is loaded; see `dedup_sort_column`.
    newest_by: str | None = None
    # The API field of a record's creation time, for a whole list that may be sent newest first: its
    # head is then read on the runs that do not read it whole (`heads.py`).
    created_at: str | None = None
    # Read whole, so a complete scan tells which records exist: a row whose key it did not see is marked
    # deleted (`DELETED_AT`, `pipelines/deletions.py`).
    marks_deletions: bool = False
    # The resource whose deleted records take their rows here with them (a product's campaigns).
    deleted_with: str | None = None
    # The columns naming the configured parent (event, student, delivery) whose rows here are marked
    # deleted when its request answers 404 in a run (`RunReport.gone`, `pipelines/deletions.py`).
    gone_by: tuple[str, ...] = ()

    def columnar_layout(self) -> Layout | None:
        """How a page of this stream's rows becomes an Arrow table, if it can (`fastpath/columnar.py`)."""
        return columnar_layout(self.model, self.extra_columns, self.primary_key)

    def dedup_sort_column(self) -> str:
        """The column of dlt's `dedup_sort` hint of a merged table: `newest_by`, else the first key column.

        Without the hint, dlt deduplicates the staged rows with `ROW_NUMBER() OVER (PARTITION BY key
        ORDER BY (SELECT NULL))`, which DuckDB runs far slower than the same window ordered by a
        column, and beyond its memory limit (bench/README.md). Ordered by the key itself, the pick
        among equal keys stays arbitrary, as dlt's is.
        """
        return self.newest_by or self.primary_key[0]


# When a record was found deleted on the platform (null while it exists); on the tables that mark it.
DELETED_AT = "_platform_deleted_at"
DELETED_AT_COLUMN: dict[str, Any] = {"data_type": "timestamp", "timezone": True, "nullable": True}
TEXT_KEY = {"data_type": "text", "nullable": False}
BIGINT_KEY = {"data_type": "bigint", "nullable": False}
