"""The kept list of forgotten people: their keyed ids (pseudonyms of an email or a document), never a value,
and the keys of the records the API linked to them (a lesson comment's id: `fields.Linked`).

`platform-sync forget` appends to `_platform_forgotten` (through its own pipeline,
`pipelines/commands/forget.py`); every later sync reads it once (`forgotten_from_destination`) and blanks
a forgotten person wherever the platform sends them again (`scrub.Scrubber`).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import dlt

from sources.platform.privacy.fields import IDENTIFYING, LINKED_BY_TABLE
from sources.platform.privacy.scrub import Forgotten

logger = logging.getLogger("platform_sync.privacy")

FORGOTTEN_TABLE = "_platform_forgotten"
REQUESTS_TABLE = "_platform_forget_requests"


def forgotten_from_destination() -> Forgotten:
    """The forgotten ids in the destination of the active pipeline, by group (empty if none yet).

    Read in a thread of its own, with the pipeline found in this one: dlt's configuration contexts of the
    calling thread (a source being declared, an extract) are left as they are."""
    try:
        pipeline = dlt.current.pipeline()
    except Exception as exc:  # no active pipeline: a source driven by hand
        logger.debug("no pipeline to read forgotten people from (%s)", type(exc).__name__)
        return {}
    with ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(_read_forgotten, pipeline).result()


def _read_forgotten(pipeline: dlt.Pipeline) -> Forgotten:
    try:
        with pipeline.sql_client() as client:
            if not client.has_dataset():
                return {}
            table = client.make_qualified_table_name(FORGOTTEN_TABLE)
            rows = client.execute_sql(f"select id_group, forgotten_id from {table}")
    except Exception as exc:  # no table yet, or a destination without SQL
        logger.debug("no forgotten people in the destination (%s)", type(exc).__name__)
        return {}
    # people by their keyed ids; the records the API linked to them by their keys (`fields.Linked`)
    found: dict[str, set[str]] = {group: set() for group in (*IDENTIFYING, *LINKED_BY_TABLE)}
    for group, forgotten_id in rows or []:
        if group in found:
            found[group].add(str(forgotten_id))
    return {group: frozenset(ids) for group, ids in found.items()}
