"""The benchmark's fixed settings: where its files go, how rows map to a world, and its default sizes.

Kept apart from the command line so that every section (and `python -m bench --help`) reads the same
figures, and a section can use them without importing the command line that runs it (and imports it).
"""

from __future__ import annotations

import tomllib

from bench import harness

DEFAULT_OUT = harness.ROOT / "bench" / "results"
WORK = harness.ROOT / "bench" / "work"

# Items of the paged lists per sale of the world (docs: sandbox/world/__init__.py proportions):
# lesson comments N/2, fiscal documents ~0.47 N, subscriptions N/5, attendees ~N/11, transfers N/30,
# affiliations ~N/67, products N/200, commenters, enrollments. Measured 101,047 items at scale 76,000.
ITEMS_PER_SALE = 1.33
# The client's own pacing is switched off for throughput (the sandbox enforces no limits there either).
NO_PACING = 1e6
# Sale details cost one request per sale: the full sync (for the models) caps them.
FULL_SYNC_SALES_CAP = 1000
# dlt's default loader for DuckDB (insert_values) costs hours at a million rows; above this it is not run.
REST_API_DEFAULT_MAX_ROWS = 150_000
# From this many rows on a scale is "large": fewer runs (`--large-runs`) keep `make bench` near 30 minutes.
LARGE_ROWS = 500_000
# Time scale of the rate-limited section. The bound shrinks with it while a sync's fixed costs (start-up,
# normalize, load: 2-3 s) do not: at 60 the bound is ~19 s at world scale 1000 and those costs alone
# exceed the 10% over the bound that its target allows; at 20 it is ~58 s, about `make demo`'s. At the
# real API's scale, 1, they are negligible.
DEFAULT_TIME_SCALE = 20.0


def world_scale_for(rows: int) -> int:
    """The sandbox world scale (sales) whose paged lists hold about `rows` items."""
    return max(50, round(rows / ITEMS_PER_SALE))


def extract_workers() -> int:
    """`[extract] workers` of the project's `.dlt/config.toml` (dlt's default is 5)."""
    try:
        config = tomllib.loads((harness.ROOT / ".dlt" / "config.toml").read_text())
        return int(config.get("extract", {}).get("workers", 5))
    except (OSError, ValueError):
        return 5
