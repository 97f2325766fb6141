"""The API's clock (its `Date` header), the run's clock and cursors bounded by them (issue 25)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pyarrow as pa

from sources.platform.cursor import Cursor
from sources.platform.fastpath.batches import observe_newest
from sources.platform.runclock import RUN_STAMPS_KEY, RunClock, latest_stamp
from sources.platform_client.client import PlatformClient
from sources.platform_client.servertime import ServerTime, parse_http_date

SERVER = datetime(2026, 6, 1, tzinfo=UTC)  # the API's clock: months behind ours below
OURS = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)
HTTP_DATE = "Mon, 01 Jun 2026 00:00:00 GMT"


def clock_with(server: datetime | None, ours: datetime = OURS, tolerance: float = 300) -> RunClock:
    readings = ServerTime()
    if server is not None:
        readings.observe(server.strftime("%a, %d %b %Y %H:%M:%S GMT"), ours + timedelta(seconds=2))
    return RunClock(ours, readings, timedelta(seconds=tolerance))


def test_http_dates_parse_to_utc_and_nonsense_tells_nothing() -> None:
    assert parse_http_date(HTTP_DATE) == SERVER
    assert parse_http_date("Mon, 01 Jun 2026 02:00:00 +0200") == SERVER
    assert [parse_http_date(v) for v in (None, "", "yesterday", "Mon, 99 Foo 2026")] == [None] * 4


def test_the_client_keeps_the_first_and_the_latest_date_of_its_answers() -> None:
    dates = iter([HTTP_DATE, "Mon, 01 Jun 2026 00:00:07 GMT", "garbage", "Mon, 01 Jun 2026 00:00:03 GMT"])

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"items": []}, headers={"Date": next(dates)})

    with PlatformClient("http://127.0.0.1:9", "t0ken", transport=httpx.MockTransport(answer)) as client:
        assert client.server_time.first is None
        for _ in range(4):
            client.request("list_webhook_origins")
        first, latest = client.server_time.first, client.server_time.latest
    assert first is not None and latest is not None
    assert (first.server, latest.server) == (SERVER, SERVER + timedelta(seconds=7))
    assert first.offset < timedelta(days=-170)  # our clock is months ahead of this API's


def test_the_cursor_bound_is_the_earlier_clock_and_the_future_is_the_apis() -> None:
    behind = clock_with(SERVER)
    assert behind.cursor_bound() == SERVER
    assert clock_with(OURS + timedelta(days=1)).cursor_bound() == OURS  # ours is the earlier
    assert clock_with(None).cursor_bound() == OURS  # no answer yet: ours
    assert not behind.is_future(SERVER + timedelta(seconds=300))
    assert behind.is_future(SERVER + timedelta(seconds=301))


def test_stamps_follow_the_api_only_beyond_the_tolerance_and_the_summary_says_so() -> None:
    behind = clock_with(SERVER, ours=datetime.now(UTC))  # elapsed since its reading: our real clock's
    stamp = behind.stamp()
    assert SERVER - timedelta(seconds=3) <= stamp < SERVER + timedelta(minutes=1)
    assert behind.stamp() == stamp  # one per run
    assert behind.skew_line() is not None and "behind ours" in behind.skew_line()  # type: ignore[operator]
    close = clock_with(OURS + timedelta(seconds=60 - 2))  # read 2 s after our start: 60 s apart
    assert (close.stamp(), close.skew_line()) == (OURS, None)


def test_each_run_is_stamped_after_the_one_before_whatever_the_apis_clock_does() -> None:
    """A server whose clock stands still between runs (our sandbox's, paused) or steps back: the stamp
    of a run is later than the stamp the earlier run kept in the source state (its floor), by 1 us at
    least, and is the clock's own when that is later (issue 25: `_platform_sync_runs` ordered by
    `run_started_at` listed the second of two runs first)."""
    earlier = datetime.now(UTC).replace(microsecond=0) - timedelta(days=200)
    # the run before was stamped 5 s after its first answer, dated `earlier`
    kept = {
        RUN_STAMPS_KEY: {"products": (earlier + timedelta(seconds=5)).isoformat(), "sales": ""},
        "last_read_at": {"products": (earlier + timedelta(seconds=4)).isoformat()},
    }
    floor = latest_stamp(kept, (RUN_STAMPS_KEY, "last_read_at"))
    assert floor == earlier + timedelta(seconds=5)
    for server in (earlier, earlier - timedelta(hours=1)):  # the clock stood still; it stepped back
        readings = ServerTime()
        readings.observe(server.strftime("%a, %d %b %Y %H:%M:%S GMT"), datetime.now(UTC))
        again = RunClock(datetime.now(UTC), readings, timedelta(seconds=300), floor=floor)
        assert again.stamp() == floor + timedelta(microseconds=1)
        assert again.now() >= again.stamp()
    moved_on = RunClock(OURS, clock_with(OURS).server, timedelta(seconds=300), floor=floor)
    assert moved_on.stamp() == OURS  # later than the floor: the clock's own
    assert latest_stamp({}, (RUN_STAMPS_KEY,)) is None


def test_a_value_past_the_bound_loads_but_never_moves_the_cursor() -> None:
    future: list[tuple[Any, datetime]] = []
    state: dict[str, Any] = {}
    cursor = Cursor(state, "k", clock_with(SERVER), lambda i, v: future.append((i, v)))
    cursor.observe(SERVER - timedelta(hours=1), "a")
    cursor.observe(SERVER + timedelta(seconds=30), "b")  # changed while the run read: not reported
    cursor.observe(SERVER + timedelta(days=20), "c")  # weeks ahead of the API's clock
    cursor.commit()
    assert state["k"]["value"] == (SERVER - timedelta(hours=1)).isoformat()
    assert future == [("c", SERVER + timedelta(days=20))]


def test_the_lookback_rereads_but_skips_what_was_loaded_with_the_same_value() -> None:
    state: dict[str, Any] = {}
    lookback = timedelta(minutes=30)
    first = Cursor(state, "k", lookback=lookback)
    for ident, minutes in (("old", -90), ("a", -20), ("b", -5), ("c", 0)):
        first.observe(SERVER + timedelta(minutes=minutes), ident)
    first.commit()
    assert state["k"]["earlier"] == {
        "a": (SERVER - timedelta(minutes=20)).isoformat(),
        "b": (SERVER - timedelta(minutes=5)).isoformat(),
    }
    second = Cursor(state, "k", lookback=lookback)
    assert second.since() == SERVER - lookback
    assert not second.is_new(SERVER - timedelta(minutes=20), "a")  # loaded with that value
    assert second.is_new(SERVER - timedelta(minutes=10), "a")  # changed since
    assert second.is_new(SERVER - timedelta(minutes=15), "late")  # became visible late
    assert not second.is_new(SERVER, "c")


def test_a_packed_page_shows_the_cursor_its_rows_within_the_bound() -> None:
    future: list[Any] = []
    state: dict[str, Any] = {}
    cursor = Cursor(state, "k", clock_with(SERVER), lambda i, v: future.append(i), timedelta(minutes=30))
    values = [SERVER - timedelta(minutes=m) for m in (40, 10, 0)] + [SERVER + timedelta(days=30)]
    table = pa.table(
        {"updated_at": pa.array(values, pa.timestamp("us", tz="UTC")), "id": ["w", "x", "y", "z"]}
    )
    observe_newest(cursor, table, ("updatedAt",), ("id",))
    cursor.commit()
    assert state["k"] == {
        "value": SERVER.isoformat(),
        "ids": ["y"],
        "earlier": {"x": (SERVER - timedelta(minutes=10)).isoformat()},
    }
    assert future == ["z"]
