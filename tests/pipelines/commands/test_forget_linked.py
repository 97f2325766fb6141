"""`platform-sync forget` beyond the fields that name the person (issue 49): the lesson comments the API
links to their email, found through the API and kept out of later syncs; dlt's completed load packages
dropped on request; and on PostgreSQL no old row version left in the database's files, and with the
option on no person the API served in them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world.people import People, Person
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.support.api_people import served_people
from tests.support.api_truth import ApiTruth
from tests.support.postgres_server import PostgresServer, running_postgres
from tests.support.privacy_scan import leaks
from tests.support.sync_helpers import source_options

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("forget_linked"), pytest.mark.timeout(900)]

SEED, SCALE = 5, 100
KEY = "privacy-key-for-tests-linked-0042"
COMMENTS = "lesson_comments"


def _api_comments(sandbox: SandboxHandle, token: str, email: str) -> dict[str, dict[str, Any]]:
    """The truth from the API itself: the comments its list gives for `email`, by id."""
    found: dict[str, dict[str, Any]] = {}
    page = 1
    with httpx.Client(base_url=sandbox.base_url, headers={"authorization": f"Bearer {token}"}) as api:
        while True:
            body = api.get("/course/v1/comments", params={"email": email, "page": page, "itemsPerPage": 50})
            body.raise_for_status()
            data = body.json()
            found.update({str(item["id"]): item for item in data["items"]})
            if page >= data["pages"]:
                return found
            page += 1


def _author(sandbox: SandboxHandle, token: str) -> tuple[Person, dict[str, dict[str, Any]]]:
    """A person of the world with at least two comments."""
    people = People(SEED)
    for pid in range(1, 400):
        person = people.get(pid)
        comments = _api_comments(sandbox, token, person.email)
        if len(comments) >= 2:
            return person, comments
    raise AssertionError("no commenter with two comments in the sandbox's world")


def _comment_rows(folder: Path) -> dict[str, tuple[Any, ...]]:
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as connection:
        rows = connection.execute(f"select id, author, text, status from platform_raw.{COMMENTS}").fetchall()
    return {str(row[0]): row[1:] for row in rows}


def _query(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def _loaded_packages(folder: Path) -> list[Path]:
    return [p for p in (folder / ".dlt").rglob("load/loaded/*") if p.is_dir()]


def test_forget_finds_the_persons_comments_through_the_api_and_keeps_them_out(tmp_path: Path) -> None:
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0) as sandbox:
        token = sandbox.token()
        env = cli_env(tmp_path, source_options(sandbox, token, privacy_key=KEY))
        synced = run_cli(["sync", "--no-progress", "--resources", COMMENTS], env, tmp_path)
        assert synced.returncode == 0, synced.stdout + synced.stderr
        person, theirs = _author(sandbox, token)
        before = _comment_rows(tmp_path)
        assert set(theirs) <= set(before)
        assert all(before[cid][0] == person.name for cid in theirs)
        assert _loaded_packages(tmp_path)
        texts = {item["text"] for item in theirs.values() if item.get("text")}
        assert texts

        forgot = run_cli(["forget", "--email", person.email.upper(), "--drop-loaded-packages"], env, tmp_path)
        assert forgot.returncode == 0, forgot.stdout + forgot.stderr
        assert f"{COMMENTS}: {len(theirs)} records the API links to the person by email" in forgot.stdout
        assert f"platform_raw.{COMMENTS}" in forgot.stdout and "rows blanked" in forgot.stdout
        after = _comment_rows(tmp_path)
        assert {cid: after[cid] for cid in theirs} == {cid: (None, None, before[cid][2]) for cid in theirs}
        assert {k: v for k, v in after.items() if k not in theirs} == {
            k: v for k, v in before.items() if k not in theirs
        }
        kept = _query(
            tmp_path,
            "select forgotten_id from platform_raw._platform_forgotten where id_group = 'lesson_comments'",
        )
        assert sorted(cid for (cid,) in kept) == sorted(theirs)
        # the completed load packages (local copies of what was loaded) are gone, and with them the texts
        assert "completed load packages deleted" in forgot.stdout
        assert _loaded_packages(tmp_path) == []
        stored = b"".join(p.read_bytes() for p in (tmp_path / ".dlt").rglob("*") if p.is_file())
        assert not [text for text in texts if text.encode() in stored]

        # the platform sends the comments again: blanked on the way in
        again = run_cli(["sync", "--no-progress", "--resources", COMMENTS, "--rescan"], env, tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "records named people forgotten earlier" in again.stdout + again.stderr
        assert {cid: _comment_rows(tmp_path)[cid][:2] for cid in theirs} == {
            cid: (None, None) for cid in theirs
        }

        # an API that cannot be asked: the rest is forgotten, the command says what is left (exit 3)
        unreachable = {
            **env,
            "SOURCES__PLATFORM__BASE_URL": "http://127.0.0.1:9",
            "SOURCES__PLATFORM__MAX_RETRIES": "1",
        }
        partial = run_cli(["forget", "--email", person.email], unreachable, tmp_path)
        assert partial.returncode == 3, partial.stdout + partial.stderr
        assert f"forget: {COMMENTS}: the person's records could not be looked up" in partial.stderr
        assert "Traceback" not in partial.stderr and token not in partial.stderr
        # by document, the API cannot be asked at all: said, not failed
        by_document = run_cli(["forget", "--document", person.document], env, tmp_path)
        assert by_document.returncode == 0, by_document.stdout + by_document.stderr
        assert f"{COMMENTS}: the API links them to a person by email only" in by_document.stdout


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def _database_files(server: PostgresServer, database: str) -> bytes:
    """The bytes of the database's own files (tables, TOAST, indexes) once the server wrote them out."""
    server.psql(database, "checkpoint")
    data = Path(server.psql("postgres", "show data_directory").strip())
    oid = server.psql("postgres", f"select oid from pg_database where datname = '{database}'").strip()
    return b"".join(p.read_bytes() for p in (data / "base" / oid).iterdir() if p.is_file())


def test_forget_on_postgres_leaves_no_old_row_version_in_the_files(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    database = postgres.create_database("forget_files")
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token()))
        env["DESTINATION__POSTGRES__CREDENTIALS"] = postgres.credentials(database)
        args = ["--destination", "postgres"]
        synced = run_cli(["sync", "--no-progress", "--resources", "product_partners", *args], env, tmp_path)
        assert synced.returncode == 0, synced.stdout + synced.stderr
        email = postgres.psql(database, "select email from platform_raw.product_partners order by id limit 1")
        email = email.strip()
        assert email.encode() in _database_files(postgres, database)
        forgot = run_cli(["forget", "--email", email, *args], env, tmp_path)
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert "changed tables rewritten by VACUUM FULL" in forgot.stdout
    assert (
        postgres.psql(
            database, f"select count(*) from platform_raw.product_partners where email = '{email}'"
        ).strip()
        == "0"
    )
    # without VACUUM FULL the old row versions keep the email in the table's file
    assert email.encode() not in _database_files(postgres, database)


def test_with_the_option_on_no_person_the_api_served_is_in_the_postgres_files(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """Every resource synced into PostgreSQL with every group hashed or blocked: none of the people the
    API served (found by what its values hold, `api_people.py`) is in the database's files; synced raw,
    the same scan finds them."""
    hashed = {"emails": "hash", "documents": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
    texts: dict[str, str] = {}
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0) as sandbox:
        token = sandbox.token()
        truth = served_people(ApiTruth(sandbox.base_url, token), sandbox.catalog(), SEED).truth
        for name, privacy in (("hashed", hashed), ("raw", {})):
            database = postgres.create_database(f"privacy_{name}")
            folder = tmp_path / name
            folder.mkdir()
            options = source_options(sandbox, token, privacy=privacy, privacy_key=KEY)
            env = {
                **cli_env(folder, options),
                "DESTINATION__POSTGRES__CREDENTIALS": postgres.credentials(database),
            }
            synced = run_cli(["sync", "--no-progress", "--destination", "postgres"], env, folder)
            assert synced.returncode == 0, synced.stdout + synced.stderr
            texts[name] = _database_files(postgres, database).decode("utf-8", errors="replace")
    assert len(truth.emails) > 50 and truth.names
    assert leaks(truth, [("raw", texts["raw"])])  # the scan finds them where they are
    assert leaks(truth, [("hashed", texts["hashed"])]) == {}


def test_the_vacuum_is_what_removes_the_old_versions(postgres: PostgresServer) -> None:
    """The check above can fail: an UPDATE alone leaves the old value in the file."""
    database = postgres.create_database("update_only")
    postgres.psql(database, "create table t (v text); insert into t values ('someone@example.org')")
    postgres.psql(database, "update t set v = null")
    assert b"someone@example.org" in _database_files(postgres, database)
    postgres.psql(database, "vacuum full t")
    assert b"someone@example.org" not in _database_files(postgres, database)
