"""Helpers for the write commands: the CLI in a subprocess against a sandbox, people to import."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import httpx

from sandbox.running import SandboxHandle
from sandbox.world.people import make_cpf
from tests.pipelines.cli.test_cli import cli_env

FIELDS = ("name", "email", "document", "phone")


def env_for(tmp_path: Path, sandbox: SandboxHandle, token: str, time_scale: float) -> dict[str, str]:
    return cli_env(
        tmp_path, {"base_url": sandbox.base_url, "access_token": token, "rate_limit_time_scale": time_scale}
    )


def person(n: int) -> dict[str, str]:
    """A valid new person: a CPF with right check digits, an email nobody in the world has."""
    return {
        "name": f"Convidada {n}",
        "email": f"convidada.{n}@partner.example",
        "document": make_cpf(7_000_000 + n * 7919),
        "phone": f"1199{n:07d}",
    }


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_results(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def attendees(sandbox: SandboxHandle, token: str, event_id: str) -> list[dict[str, Any]]:
    """The event's whole attendee list, as the API serves it."""
    items: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = httpx.get(
            f"{sandbox.base_url}/events/v1/attendance-list/by-event/{event_id}",
            params={"page": page, "itemsPerPage": 100},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
        items += answer["items"]
        if page >= answer["pages"]:
            return items
        page += 1
