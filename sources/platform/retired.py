"""Ids that do not exist retire: an id the API answers 404 for stops costing requests.

Sale ids (discovered, or configured in `sale_ids`) retire in one pass (issue 53). The first 404 puts the id
on probation; once the run's other sale ids were asked, the ids on probation are asked again, within
`unknown_ids_share` of `sales_max_requests` (`store_sales.py`), and a second 404, its confirmation (in the
same run, or in a later one when the share ran out), retires the id. A successful answer ends the
probation. The retired sale ids live in the warehouse, in `_platform_retired_ids`: `sales` reads them at
the start of its read through the pipeline's `sql_client`, and writes the run's new ones into it in the
run's own load (merge on `kind`, `id`), so dlt commits them with the state that no longer holds them on
probation. The state holds only the ids on probation, as one text per run of their first 404
(`SaleRetirements`), a few bytes an id.

`event_ids`, the `schools`' student slugs and delivery ids (configured, asked once a run, few) retire as
before: after `retire_after_not_found` runs that each got a 404, whatever the number of resources that
asked; a successful answer forgets the count. Their counts and retirements stay in the source state
(`NOT_FOUND_KEY`, `RETIRED_KEY`: `Retirements`), and `sales` copies their rows into the table at the end
of its read (a retirement made after that is copied by the next run that reads sales).

A state written before issue 53 (sale ids retired and counted in the source state) is migrated by the next
run that reads sales: its retired sale ids go into the table and its counted ones on probation, in that
run's load. A rebuild of `sales` (`sync --full-refresh`, `dlt pipeline drop` of `sales`: its state never
read sales) replaces the table: every retirement is forgotten with the state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

import dlt

logger = logging.getLogger("platform_sync.source")

# Source state: kind -> id -> [runs that got a 404, first such run's start, last such run's start]
NOT_FOUND_KEY = "not_found"
# Source state: kind -> id -> [first 404 run's start, retiring run's start, runs with a 404, reason]
RETIRED_KEY = "retired"
# `sales` resource state: the stamp of the run of the first 404 -> the sale ids on probation, one text
PROBATION_KEY = "on_probation"
RETIRED_TABLE = "_platform_retired_ids"
RETIRED_COLUMNS: dict[str, Any] = {
    "kind": {"data_type": "text", "nullable": False, "primary_key": True},
    "id": {"data_type": "text", "nullable": False, "primary_key": True},
    "first_not_found_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "retired_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "confirmations": {"data_type": "bigint", "nullable": False},
    "reason": {"data_type": "text", "nullable": True},
}
SALE_REASON = "sale_details answered 404 (not found)"
SALE_CONFIRMATIONS = 2  # the 404 answers that retire a sale id: the first and its confirmation

Kind = Literal["sale", "event", "student", "delivery"]


@dataclass
class Retirements:
    """The run's view of the retired ids and its 404s (thread-safe: resources run in parallel)."""

    after: int  # runs with a 404 that retire an id (`retire_after_not_found`)
    run_at: datetime  # this run's start: a run counts once per id
    # The run's stamp (`runclock.RunClock.stamp`), which then stands for `run_at`: read at the first 404,
    # once the API's clock is known, so that the table's times are on the clock of the run records.
    stamp: Callable[[], datetime] | None = None
    retired_now: list[tuple[str, str]] = field(default_factory=list)  # (kind, id) retired by this run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def now(self) -> datetime:
        """The time a 404 or a retirement is recorded with: the run's stamp."""
        return self.run_at if self.stamp is None else self.stamp()

    def is_retired(self, kind: Kind, item: Any) -> bool:
        with self._lock:
            return str(item) in _state(RETIRED_KEY).get(kind, {})

    def not_found(self, kind: Kind, item: Any, reason: str) -> bool:
        """Count this run's 404 for `item`; True when it retires the id now."""
        key, run = str(item), self.now().isoformat()
        with self._lock:
            counts = _state(NOT_FOUND_KEY).setdefault(kind, {})
            count, first, last = counts.get(key) or [0, run, ""]
            if last != run:
                count += 1
            if count < self.after:
                counts[key] = [count, first, run]
                return False
            counts.pop(key, None)
            _state(RETIRED_KEY).setdefault(kind, {})[key] = [first, run, count, reason]
            self.retired_now.append((kind, key))
            return True

    def found(self, kind: Kind, item: Any) -> None:
        """The API knows `item`: a count of earlier 404s is forgotten."""
        with self._lock:
            counts = _state(NOT_FOUND_KEY).get(kind)
            if counts:
                counts.pop(str(item), None)

    def retired_elsewhere(self, kind: Kind, items: Iterable[str]) -> None:
        """Ids this run retired by a rule of their own (sale ids: `SaleRetirements`), for the run's report."""
        with self._lock:
            self.retired_now.extend((kind, item) for item in items)

    def kept_in_state(self, kind: Kind) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        """Copies of the retired ids and the counts of `kind` in the source state (retired, counted)."""
        with self._lock:
            return dict(_state(RETIRED_KEY).get(kind, {})), dict(_state(NOT_FOUND_KEY).get(kind, {}))

    def forget_in_state(self, kind: Kind, retired: Iterable[str], counted: Iterable[str]) -> None:
        """Drop ids of `kind` from the source state (moved to the table, or on probation elsewhere)."""
        with self._lock:
            for key, items in ((RETIRED_KEY, retired), (NOT_FOUND_KEY, counted)):
                kept = _state(key).get(kind)
                if kept is None:
                    continue
                for item in items:
                    kept.pop(item, None)
                if not kept:
                    _state(key).pop(kind, None)

    def rows_in_state(self, but: Kind) -> list[dict[str, Any]]:
        """The table's rows of the ids the source state holds retired, of every kind but `but`."""
        with self._lock:
            kept = {kind: dict(ids) for kind, ids in _state(RETIRED_KEY).items() if kind != but}
        return retired_rows({RETIRED_KEY: kept})


def _state(key: str) -> dict[str, dict[str, list[Any]]]:
    value: dict[str, dict[str, list[Any]]] = dlt.current.source_state().setdefault(key, {})
    return value


class SaleRetirements:
    """The sale ids the API does not know, for one run of `sales` (its reader's thread only): those retired,
    and those on probation (one 404 so far), with the table's rows this run has still to hand to dlt."""

    def __init__(
        self,
        retired: set[str],
        probation: Mapping[str, str],
        stamp: Callable[[], datetime],
        legacy: Mapping[str, list[Any]] | None = None,
        confirmations: int = SALE_CONFIRMATIONS,
        in_destination: bool = False,
    ) -> None:
        self.retired = retired
        self.confirmations = confirmations  # 404 answers that retire an id: 1 or 2
        # id -> the stamp (ISO 8601) of the run of its first 404, oldest first
        self.probation = dict(sorted(probation.items(), key=lambda item: (item[1], item[0])))
        self.stamp = stamp
        self.retired_now: list[str] = []
        self._reported = 0  # of `retired_now`, told to the run's `Retirements`
        self.in_destination = in_destination  # the destination holds `_platform_retired_ids`
        self._rows = [_row("sale", item, *kept) for item, kept in sorted((legacy or {}).items())]

    @classmethod
    def for_run(
        cls, resource_state: Mapping[str, Any], retirements: Retirements, rebuilding: bool
    ) -> SaleRetirements:
        """The sale ids retired (in the destination's table, unless `rebuilding`: its load replaces the
        table) and on probation (in `resource_state`), with what a state written before issue 53 kept."""
        legacy_retired, legacy_counted = retirements.kept_in_state("sale")
        in_table = retired_in_destination("sale")
        retired = set() if rebuilding or in_table is None else in_table
        retired.update(legacy_retired)
        probation = {
            str(item): str(counted[1]) for item, counted in legacy_counted.items() if item not in retired
        }
        for stamp, ids in dict(resource_state.get(PROBATION_KEY) or {}).items():
            probation.update((item, str(stamp)) for item in str(ids).split("\n") if item)
        for item in retired:
            probation.pop(item, None)
        # `retire_after_not_found = 1`: the first 404 retires a sale id too, without a confirmation
        confirmations = min(SALE_CONFIRMATIONS, retirements.after)
        return cls(retired, probation, retirements.now, legacy_retired, confirmations, in_table is not None)

    def not_found(self, sale_id: str) -> bool:
        """Note a 404 for `sale_id`: True when it confirms an earlier one (the id retires now); else the id
        is on probation from now on."""
        first = self.probation.pop(sale_id, None)
        if first is None and self.confirmations > 1:
            self.probation[sale_id] = self.stamp().isoformat()
            logger.debug("sale %s: the API does not know it (404); on probation", sale_id)
            return False
        self.retired.add(sale_id)
        self.retired_now.append(sale_id)
        now = self.stamp()
        self._rows.append(_row("sale", sale_id, first or now, now, self.confirmations, SALE_REASON))
        logger.debug("sale %s: 404 confirmed; retired", sale_id)
        return True

    def found(self, sale_id: str) -> None:
        """The API knows `sale_id`: its probation ends."""
        self.probation.pop(sale_id, None)

    def keep(self, resource_state: dict[str, Any]) -> None:
        """Write the ids on probation into the `sales` resource state: one text per run of first 404."""
        by_run: dict[str, list[str]] = {}
        for item, stamp in self.probation.items():
            by_run.setdefault(stamp, []).append(item)
        resource_state[PROBATION_KEY] = {run: "\n".join(sorted(ids)) for run, ids in sorted(by_run.items())}

    def summary_line(self, share: float) -> str:
        """One line a run for the sale ids the API does not know, never one per id: those this run
        retired, and those still on probation (answered 404 once)."""
        parts = []
        if retired := len(self.retired_now):
            parts.append(f"{_sale_ids(retired)} the API does not know (404): retired; see {RETIRED_TABLE}")
        if waiting := len(self.probation):
            more = " more" if retired else ""
            parts.append(
                f"{_sale_ids(waiting, more)} answered 404 once and asked again in a later run before "
                f"retiring (unknown_ids_share = {share:g} of the run's sale details)"
            )
        return "; ".join(parts)

    def table_items(self, retirements: Retirements, rebuilding: bool, resource: str) -> Iterator[Any]:
        """What `resource` (`sales`) hands dlt for `_platform_retired_ids`, once, at the end of its read: the
        sale ids retired by this run or migrated from an old state, and the rows of the other kinds the
        source state holds (`Retirements`). The old state's sale ids leave it with this load. A rebuild
        replaces the table, with no row too when the destination holds one."""
        rows, self._rows = [*self._rows, *retirements.rows_in_state(but="sale")], []
        legacy_retired, legacy_counted = retirements.kept_in_state("sale")
        retirements.forget_in_state("sale", legacy_retired, legacy_counted)
        retirements.retired_elsewhere("sale", self.retired_now[self._reported :])
        self._reported = len(self.retired_now)
        if not rows and not (rebuilding and self.in_destination):
            return
        declare_retired_table(resource, "replace" if rebuilding else "merge")
        yield dlt.mark.with_table_name(rows or dlt.mark.materialize_table_schema(), RETIRED_TABLE)


def _sale_ids(count: int, more: str = "") -> str:
    return f"{count:,}{more} sale id{'' if count == 1 else 's'}"


def declare_retired_table(resource_name: str, write_disposition: Literal["merge", "replace"]) -> None:
    """Declare `_platform_retired_ids` on the running resource that yields into it (`sales`), as
    `departures.declare_tables` does for its tables: dlt starts a table variant from the resource's own
    hints (the sales' columns, key and child tables), so the variant is first emptied, then declared."""
    resource = dlt.current.source().resources[resource_name]
    resource.apply_hints(
        table_name=RETIRED_TABLE,
        create_table_variant=True,
        write_disposition=write_disposition,
        columns={},
        primary_key="",
        merge_key="",
        nested_hints={},
        file_format=cast(Any, ""),
    )
    resource.apply_hints(
        table_name=RETIRED_TABLE,
        create_table_variant=True,
        columns=RETIRED_COLUMNS,
        primary_key=["kind", "id"],
    )


def retired_in_destination(kind: Kind) -> set[str] | None:
    """The ids of `kind` in the destination's `_platform_retired_ids`; None without the table."""
    try:
        pipeline = dlt.current.pipeline()
        with pipeline.sql_client() as client:
            table = client.make_qualified_table_name(RETIRED_TABLE)
            rows = client.execute_sql(f"select id from {table} where kind = %s", kind)
    except Exception as exc:  # no pipeline, no table yet, a destination without SQL
        logger.debug("no retired %s ids in the destination (%s)", kind, exc)
        return None
    return {str(row[0]) for row in rows or []}


def retired_ids(source_state: Mapping[str, Any], kind: Kind) -> set[str]:
    """The retired ids of one kind in a committed source state (`pipeline.state`'s `sources.platform`)."""
    return set(source_state.get(RETIRED_KEY, {}).get(kind, {}))


def retired_rows(source_state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of `_platform_retired_ids` from a committed source state."""
    return [
        _row(kind, item, *kept)
        for kind, ids in sorted(source_state.get(RETIRED_KEY, {}).items())
        for item, kept in sorted(ids.items())
    ]


def _row(
    kind: str, item: str, first: Any, retired_at: Any, confirmations: Any, reason: Any
) -> dict[str, Any]:
    """A row of `_platform_retired_ids` (times as ISO 8601 text, as the state keeps them, or datetimes)."""
    return {
        "kind": kind,
        "id": item,
        "first_not_found_at": first if isinstance(first, datetime) else datetime.fromisoformat(first),
        "retired_at": retired_at if isinstance(retired_at, datetime) else datetime.fromisoformat(retired_at),
        "confirmations": int(confirmations),
        "reason": reason,
    }


def all_retired_rows(
    pipeline: dlt.Pipeline, source_state: Mapping[str, Any], sql: Callable[[], Any] | None = None
) -> list[dict[str, Any]]:
    """Every retired id after a sync, by kind and id: the rows of the destination's `_platform_retired_ids`,
    and those the committed source state holds that the table does not (other kinds retired after `sales`
    copied them, a state not migrated yet). `sql`: a client to use (`with sql() as client`), else one of
    its own."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        with (sql or pipeline.sql_client)() as client:
            table = client.make_qualified_table_name(RETIRED_TABLE)
            found = client.execute_sql(
                f"select kind, id, first_not_found_at, retired_at, confirmations, reason from {table}"
            )
    except Exception as exc:  # no table yet (nothing retired), a destination without SQL
        logger.debug("no retired ids in the destination (%s)", exc)
        found = []
    for kind, item, *kept in found or []:
        rows[(str(kind), str(item))] = _row(str(kind), str(item), *kept)
    for row in retired_rows(source_state):
        rows.setdefault((row["kind"], row["id"]), row)
    return [rows[key] for key in sorted(rows)]
