"""The recording pass of a section: every page of a world fetched once through the page server.

The throughput and tolerance sections both record their pages before any measured run, so that the runs
read recorded pages and measure their own cost; recordings are stored by seed, scale and a hash of
`sandbox/` so that a later benchmark of the same world reuses them.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness
from bench.listings import ITEMS_PER_PAGE
from bench.progress import log
from bench.settings import WORK, extract_workers
from bench.stats import ratio


def page_store(options: argparse.Namespace, scale: int, suffix: str = "") -> Path | None:
    """Where the pages of this world are kept between benchmarks (None with `--no-store`)."""
    if options.no_store:
        return None
    return WORK / "pages" / f"seed{options.seed}-scale{scale}-{harness.world_fingerprint()}{suffix}"


def record(
    options: argparse.Namespace,
    pages: harness.PageServer,
    token: str,
    walks: list[dict[str, Any]],
    store: Path | None,
    directory: Path,
) -> dict[str, Any]:
    """Fetch every page once through the page server: the pages not yet recorded come from the sandbox.

    When everything was recorded by an earlier benchmark, the live figures of that recording are reported.
    """
    meta_path = store / "recording.json" if store else None
    pages.reset_stats()
    config = {
        "base_url": pages.url,
        "token": token,
        "listings": walks,
        "items_per_page": ITEMS_PER_PAGE,
        "workers": extract_workers(),
        "load": False,
    }
    log(f"  recording pages through the page server ({pages.recorded_at_start:,} recorded before)")
    result = harness.run_worker("floor", config, directory)
    misses = int(pages.stats()["misses"])
    recording = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": result["seconds"],
        "pages": result["pages"],
        "items": result["items"],
        "bytes": result["bytes"],
        "pages_from_sandbox": misses,
        "pages_per_second": ratio(result["pages"], result["seconds"]),
        "workers": config["workers"],
        "live": misses == result["pages"],
    }
    if meta_path is not None:
        if recording["live"] or not meta_path.exists():
            meta_path.write_text(json.dumps(recording, indent=2))
        else:
            earlier = json.loads(meta_path.read_text())
            recording = {**earlier, "reused": True, "pages_from_sandbox_now": misses}
    log(
        f"  recorded {recording['pages']:,} pages, {recording['items']:,} items "
        f"({recording['pages_per_second'] or 0:.0f} pages/s live"
        f"{', reused' if recording.get('reused') else ''})"
    )
    return recording
