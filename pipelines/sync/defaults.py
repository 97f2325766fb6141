"""dlt settings that `sync()` sets for itself, written to dlt's configuration safely from any thread.

dlt keeps the values written with `dlt.config[key] = value` in one in-memory TOML document per process,
and two threads writing it together corrupt it (seen: `--all-accounts` failed one account with tomlkit's
`KeyAlreadyPresent: Key "destination" already exists`). Every write of ours goes through this module: one
lock, and a value is written only when it differs from what dlt already reads, so that after the first
sync of a process (or `sync_accounts` settling them before its threads start) nothing is written again.
"""

from __future__ import annotations

import threading
from typing import Any

import dlt

_WRITING = threading.Lock()


def set_default(key: str, value: Any) -> None:
    """Set dlt's `key` (e.g. `normalize.workers`) to `value` unless a config provider (environment
    variables, `.dlt/config.toml`, ...) already has it."""
    with _WRITING:
        if dlt.config.get(key) is None:
            dlt.config[key] = value


def set_value(key: str, value: Any) -> None:
    """Set dlt's `key` to `value`, whatever a config provider has, unless dlt already reads `value`."""
    with _WRITING:
        if dlt.config.get(key) != value:
            dlt.config[key] = value
