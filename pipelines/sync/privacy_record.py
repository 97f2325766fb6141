"""The privacy settings a dataset's data was loaded with, as the source's state records them
(`sources/platform/privacy/scrub.py`), and how a change of them is told; shared by the guard that
refuses a mixing sync (`privacy_guard.py`) and the rewrite of the tables written beside the source's
(`privacy_rewrite.py`).
"""

from __future__ import annotations

from typing import Any

import dlt

from sources.platform.privacy import OFF
from sources.platform.privacy.scrub import STATE_KEY
from sources.platform_client.errors import ConfigurationError

SOURCE_NAME = "platform"


class PrivacySettingsChanged(ConfigurationError):
    """The settings differ from those the dataset's data was loaded with."""


def recorded_settings(pipeline: dlt.Pipeline) -> dict[str, Any]:
    """The settings the loaded data was written with (everything kept when nothing is recorded)."""
    state = pipeline.state.get("sources", {}).get(SOURCE_NAME, {})
    return dict(state.get(STATE_KEY) or OFF.record())


def describe_change(recorded: dict[str, Any], current: dict[str, Any]) -> str:
    before, after = recorded.get("modes", {}), current.get("modes", {})
    changes = [
        f"{group} {before.get(group, 'keep')} -> {after.get(group, 'keep')}"
        for group in after
        if before.get(group, "keep") != after.get(group, "keep")
    ]
    if recorded.get("key_id") and current.get("key_id") and recorded["key_id"] != current["key_id"]:
        changes.append("another privacy_key")
    return ", ".join(changes) or "another privacy_key"
