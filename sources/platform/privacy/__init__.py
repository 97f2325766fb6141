"""Personal data under control: pseudonymised or blocked on the way in, forgotten on request.

- `fields.py`: which fields of the API's models hold personal data, by group (declared once), and where
  they land (record walks, warehouse columns, child tables).
- `settings.py`: the settings (`[sources.platform.privacy]`), the key (secrets) and the keyed hash.
- `scrub.py`: the one step every batch of a resource passes (`DltResource.add_step`), and free JSON.
- `cache.py`: the pseudonyms met in a run, kept (bounded) so that a person met again is not hashed again.
- `array_hash.py`: the keyed hash of a table's many distinct values at once, in DuckDB.

See docs/contracts.md, section 7.
"""

from __future__ import annotations

from sources.platform.privacy.fields import GROUPS, IDENTIFYING, PERSONAL, personal_columns, plan_for
from sources.platform.privacy.scrub import Forgotten, Scrubber
from sources.platform.privacy.settings import (
    BLOCK,
    HASH,
    KEEP,
    OFF,
    PrivacySettings,
    configured_privacy,
    normalise,
    parse_privacy,
)

__all__ = [
    "BLOCK",
    "GROUPS",
    "HASH",
    "IDENTIFYING",
    "KEEP",
    "OFF",
    "PERSONAL",
    "Forgotten",
    "PrivacySettings",
    "Scrubber",
    "configured_privacy",
    "normalise",
    "parse_privacy",
    "personal_columns",
    "plan_for",
]
