from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sources.platform.cursor import Cursor
from sources.platform_client.windows import date_windows, iso_z

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def test_cursor_skips_only_records_already_loaded_at_the_boundary_instant() -> None:
    state: dict = {}
    first = Cursor(state, "updated_at")
    for record_id, moment in [("a", T0), ("b", T0 + timedelta(seconds=5)), ("c", T0 + timedelta(seconds=5))]:
        assert first.is_new(moment, record_id)
        first.observe(moment, record_id)
    assert state == {}  # nothing is written before commit
    first.commit()
    assert state == {"updated_at": {"value": (T0 + timedelta(seconds=5)).isoformat(), "ids": ["b", "c"]}}

    second = Cursor(state, "updated_at")
    assert second.value == T0 + timedelta(seconds=5)
    assert not second.is_new(T0 + timedelta(seconds=5), "b")
    assert second.is_new(T0 + timedelta(seconds=5), "d")  # changed at the very same instant
    assert second.is_new(T0 + timedelta(seconds=6), "b")  # changed again later


def test_cursor_without_new_values_keeps_its_state() -> None:
    state = {"k": {"value": T0.isoformat(), "ids": ["x"]}}
    cursor = Cursor(state, "k")
    cursor.commit()
    assert state == {"k": {"value": T0.isoformat(), "ids": ["x"]}}


def test_windows_cover_the_range_and_share_boundaries() -> None:
    end = T0 + timedelta(days=65)
    windows = list(date_windows(T0, end, 30))
    assert windows == [
        (T0, T0 + timedelta(days=30)),
        (T0 + timedelta(days=30), T0 + timedelta(days=60)),
        (T0 + timedelta(days=60), end),
    ]
    assert list(date_windows(end, T0, 30)) == [(end, T0)]


def test_iso_z_is_utc_with_milliseconds() -> None:
    moment = datetime(2026, 6, 1, 12, 30, 5, 123456, tzinfo=UTC)
    assert iso_z(moment) == "2026-06-01T12:30:05.123Z"
