"""dlt settings that `sync()` gives a default of its own: set only where no configuration has them."""

from __future__ import annotations

from typing import Any

import dlt


def set_default(key: str, value: Any) -> None:
    """Set dlt's `key` (e.g. `normalize.workers`) to `value` unless a config provider (environment
    variables, `.dlt/config.toml`, ...) already has it."""
    if dlt.config.get(key) is None:
        dlt.config[key] = value
