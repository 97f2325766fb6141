"""Pseudonymisation on a world that breaks our rules (issue 49), not only on the sandbox's happy one.

The sandbox serves the unruly world with drift: a share of the records of every operation depart from
the spec at any depth (nulls, missing fields, values of other types, values the spec does not list,
fields it does not have), some so far that they are quarantined, and records move under the walk. The
departures' original values, the quarantined records and the rows around them are where a person can
slip through a rule written for the spec's shapes. With every group hashed or blocked, no value of any
person the API served (`api_people.served_people`, found by what the values hold) is in any column of
the warehouse, nor in any file of the working folder (state, schemas, load packages, the DuckDB file's
bytes), nor in what the run printed. A person forgotten there leaves no raw value nor pseudonym anywhere
but the forgotten list, and a rescan of the same drifted answers does not bring them back.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import httpx
import pytest

from sandbox.running import running_sandbox
from sandbox.world.people import People, Person
from sources.platform.privacy import parse_privacy
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.support.api_people import served_people
from tests.support.api_truth import ApiTruth
from tests.support.privacy_scan import (
    Truth,
    folder_texts,
    leaks,
    person_traces,
    traces_found,
    warehouse_texts,
)
from tests.support.sync_helpers import source_options

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SEED, SCALE, DRIFT = 5, 150, 0.3
PEOPLE = range(0, 301)  # the producer and the pool of buyers (max(300, scale // 2))
KEY = "privacy-key-for-the-unruly-world-51d2"
ALL_ON = {"emails": "hash", "documents": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
SETTINGS = parse_privacy(ALL_ON, KEY)
# the last key of a path that names a person: a departure there holds a person's original value
PERSONAL_KEYS = ("email", "name", "document", "phone", "responsible", "author", "cellphone", "taxId")


def test_no_person_the_unruly_world_served_lands_raw_with_the_option_on(tmp_path: Path) -> None:
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0, drift=DRIFT, unruly=True) as sandbox:
        token = sandbox.token()
        env = cli_env(tmp_path, source_options(sandbox, token, privacy=ALL_ON, privacy_key=KEY))
        run = run_cli(["-v", "sync", "--no-progress"], env, tmp_path)
        departed = httpx.get(f"{sandbox.base_url}/sandbox/departures", timeout=30).json()
        served = served_people(ApiTruth(sandbox.base_url, token), sandbox.catalog(), SEED)
        if run.returncode in (0, 3):
            person = _a_buyer(tmp_path / "warehouse.duckdb")
            forgot = run_cli(["forget", "--email", person.email], env, tmp_path)
            forgotten_found = traces_found(
                person_traces(person, SETTINGS), warehouse_texts(tmp_path / "warehouse.duckdb")
            )
            again = run_cli(["sync", "--no-progress", "--rescan"], env, tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode in (0, 3), output  # 3: records quarantined, the rest loaded
    # the world did depart where people are (nulls, fields missing: the rows beside them still hashed)
    personal = [d for d in departed if d["path"].rpartition(".")[2] in PERSONAL_KEYS]
    assert len(personal) >= 10, personal
    assert any(d["kind"] == "unlisted_field" for d in departed)  # fields the model does not have
    assert served.records > 300 and len(served.truth.emails) > 100

    truth = Truth.of_world(SEED, PEOPLE)
    for group in ("emails", "documents", "phones", "names"):
        getattr(truth, group).update(getattr(served.truth, group))
    database = tmp_path / "warehouse.duckdb"
    values = list(warehouse_texts(database))
    assert any(where.startswith("platform_raw._platform_departures.") for where, _ in values)
    assert leaks(truth, values) == {}
    assert leaks(truth, folder_texts(tmp_path)) == {}
    assert leaks(truth, [("log", output)]) == {}
    assert KEY not in output

    # forgotten: nothing of the person but the forgotten list's keyed ids, after the forget and a rescan
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert set(forgotten_found) <= {"platform_raw._platform_forgotten.forgotten_id"}, forgotten_found
    assert again.returncode in (0, 3), again.stdout + again.stderr
    after = traces_found(person_traces(person, SETTINGS), warehouse_texts(tmp_path / "warehouse.duckdb"))
    assert set(after) <= {"platform_raw._platform_forgotten.forgotten_id"}, after


def _a_buyer(database: Path) -> Person:
    """A person of the world who bought something (found by their email's pseudonym)."""
    people = People(SEED)
    with duckdb.connect(str(database), read_only=True) as connection:
        buyers = {
            row[0] for row in connection.execute("select buyer__email from platform_raw.sales").fetchall()
        }
    for pid in PEOPLE:
        person = people.get(pid)
        if SETTINGS.pseudonym("emails", person.email) in buyers:
            return person
    raise AssertionError("no person of the world bought anything")
