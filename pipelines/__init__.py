"""The runnable side of platform-sync: the command line, the pipeline, its schedules' helpers.

A Ctrl-C while the command line is still importing its libraries (dlt, dbt, pyarrow: seconds on a busy
machine) arrives before any handler of ours: it is said in one line instead of a traceback of imports
(the process still ends by SIGINT, status 130). Only for the `platform-sync` console script.
"""

from __future__ import annotations

import sys
from types import TracebackType


def _interrupted_while_starting(
    kind: type[BaseException], value: BaseException, traceback: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print("interrupted: nothing was requested", file=sys.stderr)
        return
    sys.__excepthook__(kind, value, traceback)


if sys.argv and sys.argv[0].endswith("platform-sync") and sys.excepthook is sys.__excepthook__:
    sys.excepthook = _interrupted_while_starting
