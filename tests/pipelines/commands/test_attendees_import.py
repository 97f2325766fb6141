"""`platform-sync attendees import` against the sandbox: exact creations, reruns, kill -9, pacing."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import duckdb

from sandbox.running import running_sandbox
from tests.pipelines.cli.test_cli import CLI, run_cli
from tests.support.write_commands import attendees, env_for, person, read_results, write_csv

FAST = 600.0


def test_import_creates_exactly_the_valid_new_rows_and_a_rerun_creates_nothing(tmp_path):
    with running_sandbox(seed=5, scale=400, time_scale=FAST) as sandbox:
        token = sandbox.token()
        event = sandbox.catalog()["events"][0]
        event_id, ticket_id = event["id"], event["ticket_ids"][0]
        already = attendees(sandbox, token, event_id)[0]
        new = [person(n) for n in range(5)]
        passport = {
            "name": "John Smith",
            "email": "john@abroad.example",
            "document": "X1234567",
            "phone": "+44 20 7946 0958",
        }
        rows = [
            new[0],  # line 2
            {**new[1], "document": new[1]["document"][:9] + "00"},  # line 3: CPF check digits wrong
            new[2],  # line 4
            {
                "name": already["name"],
                "email": already["email"].upper(),
                "document": "",
                "phone": "11999990000",
            },
            {**new[3], "email": "not-an-email"},  # line 6
            new[4],  # line 7
            {**new[0], "email": "other@partner.example"},  # line 8: same CPF as line 2
            {**person(9), "name": ""},  # line 9
            {**person(10), "phone": "123"},  # line 10
            passport,  # line 11
        ]
        rows[3]["document"] = already["document"] if already["documentType"] == "cpf" else "52998224725"
        csv_path = write_csv(tmp_path / "guests.csv", rows)
        env = env_for(tmp_path, sandbox, token, FAST)
        args = ["attendees", "import", str(csv_path), "--event", event_id, "--ticket", ticket_id]
        first = run_cli(args, env, tmp_path)
        assert first.returncode == 3, first.stdout + first.stderr
        for line in (3, 6, 9, 10):
            assert f"line {line}: " in first.stderr
        results = read_results(tmp_path / "guests.results.csv")
        assert [(r["line"], r["outcome"]) for r in results] == [
            ("2", "created"),
            ("3", "invalid"),
            ("4", "created"),
            ("5", "skipped"),
            ("6", "invalid"),
            ("7", "created"),
            ("8", "skipped"),
            ("9", "invalid"),
            ("10", "invalid"),
            ("11", "created"),
        ]
        assert results[1]["reason"] == "CPF check digits are wrong"
        assert results[6]["reason"] == "duplicate of line 2 in this input"
        assert results[3]["attendee_id"] == already["id"]
        listed = {a["email"]: a for a in attendees(sandbox, token, event_id)}
        for line, row in ((2, new[0]), (4, new[2]), (7, new[4]), (11, passport)):
            created = listed[row["email"]]
            assert created["id"] == results[line - 2]["attendee_id"] and created["manuallyCreated"] is True
            assert created["ticketId"] == ticket_id
        assert sandbox.stats()["operations"]["add_attendee"] == {"201": 4}

        # The sync reads them back.
        env.update(
            {"SOURCES__PLATFORM__EVENT_IDS": f'["{event_id}"]', "SOURCES__PLATFORM__START_DATE": "2020-01-01"}
        )
        synced = run_cli(["sync", "--no-progress", "--resources", "event_attendees"], env, tmp_path)
        assert synced.returncode == 0, synced.stdout + synced.stderr
        with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as db:
            manual = db.execute(
                "select email from platform_raw.event_attendees where manually_created order by email"
            ).fetchall()
            recorded = db.execute(
                "select line, outcome from platform_raw.attendee_imports order by line"
            ).fetchall()
        assert manual == sorted((r["email"],) for r in (new[0], new[2], new[4], passport))
        assert [(str(line), outcome) for line, outcome in recorded] == [
            (r["line"], r["outcome"]) for r in results
        ]

        rerun = run_cli(args, env, tmp_path)
        assert rerun.returncode == 3, rerun.stdout + rerun.stderr  # the invalid rows are still invalid
        again = read_results(tmp_path / "guests.results.csv")
        assert Counter(r["outcome"] for r in again) == {"skipped": 6, "invalid": 4}
        assert sandbox.stats()["operations"]["add_attendee"] == {"201": 4}
        emails = Counter(a["email"] for a in attendees(sandbox, token, event_id))
        assert all(emails[r["email"]] == 1 for r in (new[0], new[2], new[4], passport))


def test_import_killed_mid_way_and_rerun_ends_with_each_person_once(tmp_path):
    # 30 per 6 s: 45 rows take more than one window, and the kill lands while requests are in flight.
    time_scale = 10.0
    with running_sandbox(seed=5, scale=400, time_scale=time_scale) as sandbox:
        token = sandbox.token()
        event = sandbox.catalog()["events"][1]
        people = [person(100 + n) for n in range(45)]
        csv_path = write_csv(tmp_path / "many.csv", people)
        env = env_for(tmp_path, sandbox, token, time_scale)
        args = [
            "attendees",
            "import",
            str(csv_path),
            "--event",
            event["id"],
            "--ticket",
            event["ticket_ids"][0],
        ]
        process = subprocess.Popen([*CLI, *args], env=env, cwd=tmp_path, stderr=subprocess.DEVNULL)
        journal = next_journal(tmp_path, process)
        deadline = time.monotonic() + 60
        while journal.read_text().count('"intent"') < 12 and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait()
        entries = [json.loads(line) for line in journal.read_text().splitlines()]
        finished = sum(1 for e in entries if e["step"] == "outcome" and e["outcome"] == "created")
        in_flight = sum(1 for e in entries if e["step"] == "intent") - finished
        created_before = sandbox.stats()["operations"]["add_attendee"]["201"]
        # Killed mid-way: at most the one POST in flight may have reached the platform unrecorded.
        assert 11 <= finished < 45 and in_flight in (0, 1)
        assert created_before - finished in (0, in_flight)
        rerun = run_cli(args, env, tmp_path)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        emails = Counter(a["email"] for a in attendees(sandbox, token, event["id"]))
        assert [emails[p["email"]] for p in people] == [1] * 45
        operations = sandbox.stats()["operations"]
        # Nothing sent twice, no 429; the kill may cut a POST before its body reached the platform.
        assert operations["add_attendee"]["201"] == 45
        assert set(operations["add_attendee"]) <= {"201", "disconnected"}
        assert operations["add_attendee"].get("disconnected", 0) <= 1
        assert "429" not in operations["list_attendees"] and "429" not in operations["event_details"]
        results = read_results(tmp_path / "many.results.csv")
        # Rows the killed run finished are on the list (skipped); the one in flight, if it went through,
        # is reported as created by the interrupted run; the rest were created now.
        recovered = [r for r in results if r["reason"] == "sent by an interrupted run"]
        assert len(recovered) == created_before - finished
        assert Counter(r["outcome"] for r in results) == {"skipped": finished, "created": 45 - finished}


def next_journal(tmp_path: Path, process: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        folder = tmp_path / ".dlt" / "imports"
        found = list(folder.glob("*.jsonl")) if folder.exists() else []
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError("the import wrote no journal")
