"""Raw and pseudonymised values never mixed in one warehouse: the settings a sync runs with must be those
the data was loaded with.

The source records its privacy settings (each group's mode, the key's id) in its state, which dlt loads
with the data (`sources/platform/privacy/scrub.py`); no record means everything was kept as sent. A
sync whose settings differ from the record, into a dataset that holds data, stops before any request
with one line saying what to do (exit status 2): `--full-refresh` loads everything again under the new
settings, and rewrites the tables written beside the source's in place (`privacy_rewrite.py`). A key
rotation is such a change: every pseudonym changes with the key.
"""

from __future__ import annotations

import logging

import dlt

from pipelines.sync.privacy_record import PrivacySettingsChanged, describe_change, recorded_settings
from pipelines.sync.privacy_rewrite import check_companions, rewrite_companions
from sources.platform.privacy import OFF, PrivacySettings

logger = logging.getLogger("platform_sync.privacy")


def check_privacy(pipeline: dlt.Pipeline, settings: PrivacySettings, full_refresh: bool = False) -> None:
    """Refuse a sync that would mix values written under other settings with this run's."""
    if (settings.active or full_refresh) and not pipeline.default_schema_name:
        pipeline.sync_destination()  # a fresh working folder: the record is in the destination
    current = settings.record() if settings.active else OFF.record()
    recorded = recorded_settings(pipeline)
    if full_refresh:
        # the source's tables are loaded again; the tables written beside them are rewritten in place
        rewritten = rewrite_companions(pipeline, settings, lambda: recorded)
        for table, rows in sorted(rewritten.items()):
            logger.warning("privacy settings changed: %s rewritten in place (%d rows)", table, rows)
        return
    if recorded == current or not _holds_data(pipeline):
        check_companions(pipeline, settings, lambda: recorded)
        return
    raise PrivacySettingsChanged(
        f"the privacy settings changed ({describe_change(recorded, current)}) but dataset "
        f"{pipeline.dataset_name} holds data loaded under the earlier ones, and the two would mix: "
        "nothing was synced. Load everything again under the new settings with `platform-sync sync "
        "--full-refresh`, or put the earlier settings back (docs/contracts.md, section 7)"
    )


def _holds_data(pipeline: dlt.Pipeline) -> bool:
    if not pipeline.default_schema_name:
        return False
    return bool(pipeline.default_schema.data_tables(seen_data_only=True))
