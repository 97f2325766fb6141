"""The command line: `platform-sync` parses, runs a command from the rooms below and says what happened.

`main.py` is the entry point (`platform-sync = "pipelines.cli.main:main"`; `python -m pipelines.cli`);
the rest is how the command line speaks (output, summary, interrupt), the options of many accounts
(`accounts.py`) and `demo`. It may import `accounts`, `commands`, `dbt`, `sync` and `webhooks`; nothing
imports it.
"""
