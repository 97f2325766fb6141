"""Nothing let in (issue 15): a configuration mistake ends the real command before any request, with
exit status 2, a message naming the key (and the closest known key, or the value and an example), and no
traceback; wherever the key was set (config.toml, secrets.toml, the environment)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.running import SandboxHandle, running_sandbox
from tests.support.cli import cli_env, run_cli


@pytest.fixture(scope="module")
def idle_sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=1, scale=50) as handle:
        yield handle


CASES = [
    (
        "env",
        {"sales_max_request": "3"},
        "unknown key sales_max_request in [sources.platform] (environment variable "
        "SOURCES__PLATFORM__SALES_MAX_REQUEST): did you mean sales_max_requests?",
    ),
    (
        "config.toml",
        "sales_max_request = 3",
        "unknown key sales_max_request in [sources.platform] (config.toml): did you mean sales_max_requests?",
    ),
    (
        "secrets.toml",
        'acess_token = "x"',
        "unknown key acess_token in [sources.platform] (secrets.toml): did you mean access_token?",
    ),
    (
        "config.toml",
        'items_per_page = "abc"',
        "items_per_page must be a whole number, e.g. items_per_page = 100; got 'abc'",
    ),
    ("env", {"items_per_page": "abc"}, "items_per_page must be a whole number, e.g. items_per_page = 100"),
    (
        "config.toml",
        'rescan = "sometimes"',
        "rescan must be true or false, e.g. rescan = false; got 'sometimes'",
    ),
    (
        "config.toml",
        '[sources.platform.schools]\nteam_slug = "a"',
        "schools must be an array of tables, e.g. schools = [{team_slug = ",
    ),
    (
        "config.toml",
        'schools = [{team_slug = "a", student_slugs = "one-slug"}]',
        "schools[0].student_slugs must be a list, e.g. student_slugs = [\"ana-lima\"]; got 'one-slug'",
    ),
    ("config.toml", 'event_ids = "abc"', "event_ids must be a list of event ids"),
    # Settings checked before any request (issue 26).
    ("config.toml", 'start_date = "2999-01-01"', "start_date '2999-01-01' is in the future (now "),
    (
        "env",
        {"start_date": "1999-12-31"},
        "start_date '1999-12-31' is before 2000-01-01, older than any data",
    ),
    ("config.toml", 'start_date = "0999-01-01"', "start_date '0999-01-01' is before 2000-01-01"),
    ("config.toml", 'start_date = "2024-13-45"', "start_date '2024-13-45' is not a date"),
    ("config.toml", 'event_ids = [""]', "event_ids[0] is '', not a uuid: event_ids must be a list of uuids"),
    ("config.toml", 'event_ids = ["4f6c3a1e-2b7d"]', "event_ids[0] is '4f6c3a1e-2b7d', not a uuid"),
    ("config.toml", "community_ids = [12, 0]", "community_ids[1] is 0, not an id: community_ids must be"),
    ("config.toml", 'course_ids = ["7a"]', "course_ids[0] is '7a', not an id"),
    ("config.toml", 'sale_ids = ["100", " "]', "sale_ids[1] is ' ', not an id: each must be non-empty"),
    ("config.toml", 'sale_ids = ["1/../2"]', "sale_ids[0] is '1/../2', not an id"),
    (
        "config.toml",
        'schools = [{team_slug = "a", student_slugs = ["ana", ""]}]',
        "schools[0].student_slugs[1] is '', not an id",
    ),
    (
        "config.toml",
        'schools = [{team_slug = "a", delivery_ids = [-3]}]',
        "schools[0].delivery_ids[0] is -3, not an id",
    ),
    (
        "config.toml",
        'access_token = "config-token"',
        "access_token is a secret and cannot be set in config.toml: move it to .dlt/secrets.toml",
    ),
]


@pytest.mark.parametrize(("where", "setting", "message"), CASES)
def test_config_error_exits_2_before_any_request(
    tmp_path: Path, idle_sandbox: SandboxHandle, where: str, setting: object, message: str
) -> None:
    options: dict[str, object] = {"base_url": idle_sandbox.base_url}
    if isinstance(setting, dict):
        options.update(setting)
    env = cli_env(tmp_path, options)
    dlt_dir = tmp_path / ".dlt"
    dlt_dir.mkdir()
    secrets = "" if "access_token" in str(setting) else 'access_token = "secret-token-123"\n'
    if where == "secrets.toml":
        secrets += f"{setting}\n"
    (dlt_dir / "secrets.toml").write_text(f"[sources.platform]\n{secrets}")
    if where == "config.toml":
        assert isinstance(setting, str)
        (dlt_dir / "config.toml").write_text(f"[sources.platform]\n{setting}\n")
    idle_sandbox.reset_stats()

    result = run_cli(["sync", "--no-progress"], env, tmp_path)

    assert result.returncode == 2, result.stdout + result.stderr
    assert f"configuration error: {message}" in result.stderr
    assert "Traceback" not in result.stderr
    assert "secret-token-123" not in result.stderr + result.stdout
    assert idle_sandbox.stats()["total"] == 0
