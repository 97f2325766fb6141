"""The command line, `python -m sandbox`, clean stops on signals, and the subprocess fixture."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import httpx
import pytest

from sandbox.cli import main
from sandbox.running import running_sandbox, running_sandbox_process
from tests.support.fake_world import FakeWorld

ROOT = str(Path(__file__).resolve().parents[2])
FAKE = {"world_factory": "tests.support.fake_world:FakeWorld", "env": {"PYTHONPATH": ROOT}}


def test_help_lists_commands_and_serve_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert all(word in out for word in ("serve", "advance", "authorize", "catalog"))
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for option in (
        "--host",
        "--port",
        "--auth-port",
        "--seed",
        "--scale",
        "--time-scale",
        "--faults",
        "--rate-limits",
        "--drift",
        "--drift-seed",
    ):
        assert option in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--faults", "error=2"],
        ["--rate-limits", "maybe"],
        ["--time-scale", "0"],
        ["--port", "x"],
        ["--port", "70000"],
        ["--scale", "0"],
        ["--drift", "1.5"],
        ["--drift", "-0.1"],
        ["--drift", "some"],
    ],
)
def test_bad_serve_options_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


def test_client_commands_against_a_running_sandbox(capsys):
    with running_sandbox(world=FakeWorld()) as sandbox:
        assert main(["advance", "--seconds", "60", "--base-url", sandbox.base_url]) == 0
        assert capsys.readouterr().out.strip() == "2026-06-01T00:01:00.000Z"
        assert main(["catalog", "--base-url", sandbox.base_url]) == 0
        assert '"events"' in capsys.readouterr().out
        assert main(["authorize", "--auth-url", sandbox.auth_url, "--scope", "events_read"]) == 0
        code = capsys.readouterr().out.strip()
        assert len(code) > 20
        assert main(["authorize", "--auth-url", sandbox.auth_url, "--exchange"]) == 0
        token = capsys.readouterr().out.strip()
        headers = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{sandbox.base_url}/store/v1/products", headers=headers).status_code == 200
        assert main(["authorize", "--auth-url", sandbox.auth_url, "--client-id", "nobody"]) == 1
        assert "404" in capsys.readouterr().err


def test_client_commands_report_an_unreachable_sandbox(capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert main(["catalog", "--base-url", f"http://127.0.0.1:{port}"]) == 1
    assert "is the sandbox running?" in capsys.readouterr().err


def test_in_process_sandbox_releases_its_ports():
    with running_sandbox(world=FakeWorld()) as sandbox:
        port = int(sandbox.base_url.rsplit(":", 1)[1])
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    with pytest.raises(httpx.ConnectError):
        httpx.get(sandbox.base_url + "/sandbox/stats")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_python_m_sandbox_serves_and_stops_cleanly_on_signals(sig):
    with running_sandbox_process(**FAKE) as sandbox:
        assert sandbox.process is not None
        token = sandbox.token()
        response = httpx.get(
            f"{sandbox.base_url}/store/v1/products", headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 200
        sandbox.process.send_signal(sig)
        assert sandbox.process.wait(15) == 0
        assert sandbox.process.stdout is not None
        assert "sandbox stopped" in sandbox.process.stdout.read()


def test_a_killed_sandbox_process_refuses_connections():
    with running_sandbox_process(**FAKE) as sandbox:
        assert sandbox.process is not None
        sandbox.process.kill()
        sandbox.process.wait(15)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{sandbox.base_url}/sandbox/stats")


def test_the_banner_prints_urls_and_demo_credentials():
    command = [
        sys.executable,
        "-m",
        "sandbox",
        "--port",
        "0",
        "--auth-port",
        "0",
        "--world",
        "tests.support.fake_world:FakeWorld",
    ]
    env = {"PYTHONPATH": ROOT, "PATH": ""}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(6)]
    finally:
        process.terminate()
        process.wait(15)
    text = "".join(lines)
    assert "base_url: http://127.0.0.1:" in text and "auth_url: http://127.0.0.1:" in text
    assert "client_id: sandbox-demo" in text and "client_secret: sandbox-demo-secret" in text


def test_an_unknown_world_is_a_clear_error(capsys):
    assert main(["--port", "0", "--auth-port", "0", "--world", "no_such_module:World"]) == 2
    assert "cannot load the world" in capsys.readouterr().err


def test_the_banner_prints_the_settings_that_point_a_sync_at_it(tmp_path):
    """Issue 51: the sandbox printed its addresses but not the `rate_limit_time_scale` (nor the ids the API
    cannot list) a sync against it needs. The lines it prints, run by a shell as a user pastes them, then
    the real `sync`: exit 0, paced at the sandbox's time scale, with the events the catalog names."""
    command = [sys.executable, "-m", "sandbox", "--port", "0", "--auth-port", "0", "--seed", "2"]
    command += ["--scale", "50", "--time-scale", "600"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": ROOT, "PATH": ""}
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("stop with"):
            lines.append(process.stdout.readline())
        exports = [line.strip() for line in lines if line.startswith("  export SOURCES__PLATFORM__")]
        keys = [line.split("=", 1)[0].removeprefix("export SOURCES__PLATFORM__") for line in exports]
        assert keys == [
            "BASE_URL",
            "RATE_LIMIT_TIME_SCALE",
            "EVENT_IDS",
            "COMMUNITY_IDS",
            "COURSE_IDS",
            "SCHOOLS",
            "ACCESS_TOKEN",
        ]
        assert "SOURCES__PLATFORM__RATE_LIMIT_TIME_SCALE=600" in exports[1]
        bin_dir = Path(sys.executable).parent
        script = "\n".join([*exports, "platform-sync sync --no-progress --resources products,events"])
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "DLT_DATA_DIR": str(tmp_path / ".dlt"),
        }
        env["DESTINATION__DUCKDB__CREDENTIALS"] = str(tmp_path / "w.duckdb")
        env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
        result = subprocess.run(
            ["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        process.terminate()
        process.wait(15)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout
    events = json.loads(next(e for e in exports if "EVENT_IDS" in e).split("=", 1)[1].strip("'"))
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as connection:
        loaded = connection.execute("select id from platform_raw.events").fetchall()
    assert events and sorted(i for (i,) in loaded) == sorted(events)
