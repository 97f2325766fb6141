"""Running a sync: the dlt pipeline (`platform_pipeline.py`), its companion pipelines, and what a run
needs around it: the run locks, the working folder, memory and process settings, the checks before it
(preflight, privacy), what happens after its load (deletions, coverage, the runs table), its progress,
and its verdict (the exit status and one message per cause: `verdict.py`, `messages.py`).

The lowest room of `pipelines/`: it imports `sources/` and dlt, never another room.
"""
