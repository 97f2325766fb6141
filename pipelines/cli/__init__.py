"""The command line: `platform-sync` parses, runs a command from the rooms below and says what happened.

`main.py` is the entry point (`platform-sync = "pipelines.cli.main:main"`; `python -m pipelines.cli`);
the rest is how the command line speaks (output, summary, interrupt), the options of many accounts
(`accounts.py`) and `demo`. It may import `accounts`, `commands`, `dbt`, `sync` and `webhooks`; nothing
imports it.
"""

from __future__ import annotations

import os

import dlt

TELEMETRY_VARIABLE = "RUNTIME__DLTHUB_TELEMETRY"


def telemetry_off_unless_chosen() -> None:
    """dlt's anonymous usage telemetry (an HTTPS call to dltHub after each run) is on by default; the tool
    talks only to the API and the warehouse (issue 51), wherever it runs from, not only from the checkout
    whose `.dlt/config.toml` turns it off. A choice the user made (that variable, or `dlthub_telemetry` in
    a `.dlt/config.toml` dlt reads) stands."""
    if TELEMETRY_VARIABLE in os.environ:
        return
    try:
        chosen: object = dlt.config.get("runtime.dlthub_telemetry")
    except Exception:  # an unreadable config is reported where the command reads it, not here
        chosen = None
    if chosen is None:
        os.environ[TELEMETRY_VARIABLE] = "false"


telemetry_off_unless_chosen()
