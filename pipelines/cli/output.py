"""How the command line speaks: plain text for people, or `--log-format json` for log collectors (one
JSON object per line on stderr, and the run's summary as one JSON object on stdout).

Messages are the ones the code already writes for people; they are built from redacted text (no token,
no secret, no credentials in a URL), and so are their JSON forms.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
from typing import Any, TextIO

_FORMAT = {"log_format": "text"}


class JsonLines(logging.Formatter):
    """One JSON object per log record: time, level, logger, message."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _now(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and record.exc_info[1] is not None:
            entry["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        return json.dumps(entry)


def configure_logging(verbose: bool, log_format: str) -> None:
    """Root logging to stderr, in the format asked for, and dlt's logger in the same format."""
    _FORMAT["log_format"] = log_format
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonLines())
        # dlt's logger has its own handler, set up when a pipeline starts: its JSON format, from config
        os.environ["RUNTIME__LOG_FORMAT"] = "JSON"
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler], force=True)


def is_json() -> bool:
    return _FORMAT["log_format"] == "json"


def say(message: str, level: str = "error", event: str = "message", out: TextIO | None = None) -> None:
    """A message to the user on stderr: as it is, or as a JSON line."""
    stream = out or sys.stderr
    if is_json():
        print(json.dumps({"time": _now(), "level": level, "event": event, "message": message}), file=stream)
    else:
        print(message, file=stream)


def print_json(record: dict[str, Any], out: TextIO | None = None) -> None:
    """One JSON object on one line (stdout by default); datetimes as ISO 8601."""
    print(json.dumps({"time": _now(), **record}, default=_iso), file=out or sys.stdout)


def _iso(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
