"""Event ids configured in another form of the same uuid (issue 53): upper case, braces, `urn:uuid:`, no
hyphens. They passed the configuration check and their attendees never loaded; now each is the API's
own canonical form, and the warehouse holds the same events and attendees as with the ids as listed."""

from __future__ import annotations

import uuid

import pytest

from pipelines.sync.platform_pipeline import sync
from sources.platform.settings import uuid_ids
from sources.platform_client.errors import ConfigurationError
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import ids, source_options

CANONICAL = "4f6c3a1e-2b7d-4c1a-9f3e-8d2b6a5c7e90"


@pytest.mark.parametrize(
    "given",
    [
        CANONICAL.upper(),
        "{" + CANONICAL + "}",
        "urn:uuid:" + CANONICAL,
        CANONICAL.replace("-", ""),
        f" {CANONICAL} ",
    ],
)
def test_a_uuid_in_another_form_is_its_canonical_form(given):
    assert uuid_ids("event_ids", [given]) == (CANONICAL,)


def test_a_value_that_is_no_uuid_is_still_refused():
    with pytest.raises(ConfigurationError, match=r"event_ids\[1\] is '4f6c3a1e-2b7d', not a uuid"):
        uuid_ids("event_ids", [CANONICAL, "4f6c3a1e-2b7d"])


def test_events_configured_in_upper_case_and_braces_load_their_attendees(sandbox, make_pipeline):
    token = sandbox.token()
    event_ids = [e["id"] for e in sandbox.catalog()["events"]]
    assert event_ids and all(str(uuid.UUID(i)) == i for i in event_ids)
    odd = [i.upper() if n % 2 else "{" + i + "}" for n, i in enumerate(event_ids)]
    pipeline = make_pipeline()
    result = sync(
        pipeline,
        resources=["events", "event_attendees"],
        source_options=source_options(sandbox, token, event_ids=odd),
    )
    assert result.report.failed == {}
    assert sorted(ids(pipeline, "events")) == sorted(event_ids)
    truth = ApiTruth(sandbox.base_url, token)
    assert set(ids(pipeline, "event_attendees")) == {a["id"] for a in truth.attendees(event_ids)}
    assert len(ids(pipeline, "event_attendees")) > 0
