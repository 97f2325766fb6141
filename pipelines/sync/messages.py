"""One message per cause: what the command line tells the user when something went wrong.

The source reports each resource that failed or was skipped as it happens (`RunReport.fail`/`skip`,
logged by `platform_sync.source`). A rejected token or a dead server fails every resource for the same
reason, so the command line holds those log lines back (`HoldResourceOutcomes`) and says each cause once
at the end, naming the resources it hit (`grouped_causes`). Errors dlt raises are reduced to their reason
(`step_failure`), without dlt's generic preamble and without a traceback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from dlt.common.configuration.exceptions import InvalidNativeValue

# `RunReport.fail` / `skip` log "<resource> failed: <reason>" and "<resource> skipped: <reason>"
RESOURCE_OUTCOME_FORMATS = frozenset({"%s failed: %s", "%s skipped: %s"})
_OPERATION_PREFIX = re.compile(r"^[a-z_]+: ")
_URL = re.compile(r"(https?://[^/\s]+)[^\s]*")
# dlt's DestinationConnectionError: "... failed. Please check if you configured the credentials at all
# ... The actual reason given is: <reason>"
_ACTUAL_REASON = "The actual reason given is: "
_DUCKDB_LOCK = re.compile(
    r'Could not set lock on file "([^"]+)": Conflicting lock is held in (.+?) \(PID (\d+)\)'
)


class HoldResourceOutcomes(logging.Filter):
    """Drops the source's per-resource "failed" and "skipped" log lines: the command line says each
    cause once when the run ends (`grouped_causes`), and the summary lists the resources."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "platform_sync.source" and record.msg in RESOURCE_OUTCOME_FORMATS)


def cause_of(reason: str) -> str:
    """The reason without the operation that met it, and URLs cut to their origin: a rejected token or
    a dead server reads the same for every resource."""
    return _URL.sub(r"\1", _OPERATION_PREFIX.sub("", reason, count=1))


def grouped_causes(outcomes: Mapping[str, str], verb: str) -> list[str]:
    """One line per distinct cause: "products, transfers <verb>: <cause>", in the order first met."""
    by_cause: dict[str, list[str]] = {}
    for resource, reason in outcomes.items():
        by_cause.setdefault(cause_of(reason), []).append(resource)
    return [f"{', '.join(resources)} {verb}: {cause}" for cause, resources in by_cause.items()]


def step_failure(step: str, error: BaseException) -> tuple[str, bool]:
    """What to say when a dlt step raised, and whether it is the configuration's fault (exit 2)."""
    text = str(error)
    if _ACTUAL_REASON in text:
        text = text.split(_ACTUAL_REASON, 1)[1]
    held = duckdb_held_message(text, "Nothing was requested.")
    if held is not None:
        return held, True
    return f"sync failed in the {step} step: {text.strip()}", False


def duckdb_held_message(text: str, consequence: str) -> str | None:
    """The one line for DuckDB's "Could not set lock" in an error's text (another program has the file
    open), or None when the text is about something else."""
    locked = _DUCKDB_LOCK.search(text)
    if locked is None:
        return None
    path, program, pid = locked.groups()
    return (
        f"not started: the DuckDB file {path} is open in another program ({program}, pid {pid}); "
        f"close it (or its connection) and run again. {consequence}"
    )


def invalid_value_message(error: InvalidNativeValue) -> str:
    """A configuration value dlt could not parse (the value itself may be a secret: never shown)."""
    spec = error.spec.__name__
    if spec.endswith("Credentials"):
        kind = spec.removesuffix("Credentials").lower()
        form = " such as postgresql://user:password@host:5432/database" if kind == "postgres" else ""
        return (
            f"the {kind} destination's credentials could not be read (value not shown): set a connection "
            f"string{form} in DESTINATION__{kind.upper()}__CREDENTIALS or as [destination.{kind}] "
            "credentials in .dlt/secrets.toml."
        )
    sections = ".".join(error.embedded_sections) or "a setting"
    return f"the value of {sections} could not be read as {spec} (value not shown): check it."
