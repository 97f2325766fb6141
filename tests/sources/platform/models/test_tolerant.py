"""Tolerant reading: any record of the spec's shape, however it departs from the spec, loads (or goes to
quarantine when its key is unusable); departed cursor values never move a cursor."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sources.platform.cursor import Cursor
from sources.platform.departures import DepartureLog
from sources.platform.models import KINDS, Departure, RecordValidationError, parse_record
from sources.platform.records import RecordReader, new_rows, record_key
from sources.platform.resources import STREAMS
from tests.sources.platform.models.test_models import RECORD_OF_TABLE, record

# Values of other types and forms than the spec's: each is one departure for any field it lands in
# (or none, for a value of the very type).
ODD_VALUES = [None, "", "n/a", "12.50", 3.0, 0, 1, "true", True, {"x": 1}, [1, "a"], "2024-05-01", -7]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a record (list positions as ints)."""
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.append((*prefix, index))
            found += _paths(child, (*prefix, index))
    return found


def _change(raw: dict[str, Any], path: tuple[Any, ...], how: str, value: Any) -> None:
    node: Any = raw
    for part in path[:-1]:
        node = node[part]
    last = path[-1]
    if how == "remove":
        del node[last]
    elif how == "add" and isinstance(node, dict):
        node[f"unlisted{len(node)}"] = value
    else:
        node[last] = value


changes = st.lists(
    st.tuples(
        st.integers(min_value=0), st.sampled_from(["set", "remove", "add"]), st.sampled_from(ODD_VALUES)
    ),
    max_size=6,
)


@pytest.mark.parametrize("table", sorted(RECORD_OF_TABLE))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=changes)
def test_any_departure_of_any_record_loads_or_is_quarantined_for_its_key(table: str, edits: Any) -> None:
    stream = STREAMS[table]
    raw = record(RECORD_OF_TABLE[table])
    for pick, how, value in edits:
        paths = _paths(raw)
        if not paths:  # every key removed: an empty object
            break
        path = paths[pick % len(paths)]
        if how == "remove" and isinstance(path[-1], int):
            how = "set"
        _change(raw, path, how, copy.deepcopy(value))
    sent = copy.deepcopy(raw)
    log = DepartureLog()
    rows = RecordReader(strict=False, log=log, redact=lambda text: text).read(stream, [raw])
    assert raw == sent  # the input is left alone
    _, unkeyed = record_key(stream, raw)
    if unkeyed:
        assert rows == [] and [q.reason for q in log.quarantined()] == [unkeyed]
        return
    [(row, _)] = rows
    json.dumps(row, default=str)  # a plain row dlt can take
    assert all(d.kind in KINDS for d in _departures_of(stream.model, raw))
    assert log.quarantined() == []


def _departures_of(model: Any, raw: dict[str, Any]) -> list[Departure]:
    found: list[Departure] = []
    parse_record(model, raw, departures=found)
    return found


@pytest.mark.parametrize("table", sorted(RECORD_OF_TABLE))
def test_a_record_that_departs_in_nothing_reads_alike_both_ways(table: str) -> None:
    from sources.platform.models.tolerant import read_tolerantly

    model, raw = STREAMS[table].model, record(RECORD_OF_TABLE[table])
    assert read_tolerantly(model, raw) == (parse_record(model, raw), [])


# --- what cannot be keyed ---


@pytest.mark.parametrize(
    ("record_", "reason"),
    [
        ({"status": "approved"}, "no key: id is missing, null or empty"),
        ({"id": None}, "no key: id is missing, null or empty"),
        ({"id": ""}, "no key: id is missing, null or empty"),
        ({"id": {"nested": 1}}, "the key id is a dict, not a string or a number"),
        ({"id": True}, "the key id is a bool, not a string or a number"),
        ("not an object", "not a JSON object"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_a_record_without_a_usable_key_is_quarantined_with_its_secrets_removed(
    record_: Any, reason: str
) -> None:
    stream = STREAMS["lesson_comments"]
    raw = {**record("lesson_comment"), "note": "Bearer tok-123456789"} if isinstance(record_, dict) else None
    if raw is not None:
        raw.update(record_)
        if "status" in record_:
            del raw["id"]
    item = raw if raw is not None else record_
    log = DepartureLog()
    reader = RecordReader(strict=False, log=log, redact=lambda text: text.replace("tok-123456789", "***"))
    good = record("lesson_comment")
    rows = reader.read(stream, [item, good])
    assert [row["id"] for row, _ in rows] == [good["id"]]  # the others load
    [quarantined] = log.quarantined()
    assert (quarantined.resource, quarantined.reason) == ("lesson_comments", reason)
    assert "tok-123456789" not in quarantined.raw_json
    assert json.loads(quarantined.raw_json) == json.loads(json.dumps(item).replace("tok-123456789", "***"))


def test_strict_reading_fails_on_any_departure() -> None:
    stream = STREAMS["lesson_comments"]
    reader = RecordReader(strict=True, log=DepartureLog(), redact=lambda text: text)
    assert len(reader.read(stream, [record("lesson_comment")])) == 1
    with pytest.raises(RecordValidationError, match="status: got 'spam'"):
        reader.read(stream, [{**record("lesson_comment"), "status": "spam"}])
    with pytest.raises(RecordValidationError, match="expected a JSON object"):
        reader.read(stream, ["not an object"])


# --- cursors ---


def _attendee(ident: str, modified: Any) -> dict[str, Any]:
    return {**record("attendee"), "id": _uuid(ident), "modifiedAt": modified}


def _uuid(ident: str) -> str:
    return f"00000000-0000-4000-8000-0000000000{ident}"


def test_a_departed_cursor_value_loads_its_row_and_never_moves_the_cursor() -> None:
    state: dict[str, Any] = {"modified_at": {"value": "2026-05-01T12:00:00+00:00", "ids": [_uuid("a0")]}}
    cursor = Cursor(state, "modified_at")
    log = DepartureLog()
    reader = RecordReader(strict=False, log=log, redact=lambda text: text)
    page = [
        _attendee("a0", "2026-05-01T12:00:00Z"),  # loaded at the boundary already: skipped
        _attendee("a1", "2026-05-01T13:00:00Z"),  # new: moves the cursor
        _attendee("a2", None),  # null where the spec has none: loaded, does not move the cursor
        _attendee("a3", "2026-05-02"),  # date-only: loaded, does not move the cursor
        _attendee("a4", "2026-06-01 09:00:00"),  # no zone, later than all: loaded, does not move it
        _attendee("a5", ""),  # unconvertible: loaded with a null, does not move the cursor
    ]
    rows = new_rows(
        cursor, reader.read(STREAMS["event_attendees"], page, cursor=("modifiedAt",)), "modifiedAt"
    )
    assert [row["id"] for row in rows] == [_uuid(i) for i in ("a1", "a2", "a3", "a4", "a5")]
    cursor.commit()
    assert state["modified_at"] == {"value": "2026-05-01T13:00:00+00:00", "ids": [_uuid("a1")]}
    assert rows[2]["modifiedAt"] == datetime(2026, 5, 2, tzinfo=UTC) and rows[4]["modifiedAt"] is None
    kinds = {
        (row["resource"], row["field_path"], row["kind"], row["records"])
        for row in log.departure_rows("event_attendees")
    }
    assert kinds == {
        ("event_attendees", "modifiedAt", "null", 1),
        ("event_attendees", "modifiedAt", "converted", 2),
        ("event_attendees", "modifiedAt", "unconvertible", 1),
    }


def test_the_departures_table_rows_count_records_and_keep_values() -> None:
    log = DepartureLog()
    log.record("sales", "s1", [Departure("payment.method", "unlisted_value", "applePay")])
    log.record("sales", "s2", [Departure("payment.method", "unlisted_value", "applePay")])
    log.record("sales", "s3", [Departure("payment.method", "unlisted_value", "barter")])
    log.record("sales", "s3", [Departure("total.value", "unconvertible", "n/a")])
    log.record("sales", "s4", [Departure("buyer.name", "unconvertible", None)])  # personal: no value
    assert log.departure_rows("sales") == [
        {"resource": "sales", "field_path": "buyer.name", "kind": "unconvertible", "records": 1,
         "example_record_id": "s4", "values": []},
        {"resource": "sales", "field_path": "payment.method", "kind": "unlisted_value", "records": 3,
         "example_record_id": "s1", "values": [
             {"value": "applePay", "record_id": None, "records": 2},
             {"value": "barter", "record_id": None, "records": 1},
         ]},
        {"resource": "sales", "field_path": "total.value", "kind": "unconvertible", "records": 1,
         "example_record_id": "s3", "values": [{"value": "n/a", "record_id": "s3", "records": 1}]},
    ]  # fmt: skip
    assert log.summary()[0] == (
        "sales: payment.method had 2 values the spec does not list: applePay (2 records), barter (1 record)"
    )
