"""End to end: a record the API sends without a usable key is quarantined, the others load, the run is
partial, and the quarantined JSON carries no secret."""

from __future__ import annotations

import json
from typing import Any

import httpx

from pipelines.sync.platform_pipeline import sync
from sources.platform_client.client import PlatformClient
from tests.sources.platform.models.test_models import record
from tests.support.sync_helpers import query

TOKEN = "secret-token-0123456789"


def _comments(request: httpx.Request) -> httpx.Response:
    assert request.url.path == "/course/v1/comments"
    keyless = {**record("lesson_comment"), "id": None, "text": f"my token is {TOKEN}"}
    items = [{**record("lesson_comment"), "id": 1}, keyless, {**record("lesson_comment"), "id": 2}]
    body = {"page": 1, "pages": 1, "itemsPerPage": 100, "totalItems": 3, "items": items}
    return httpx.Response(200, json=body)


def test_a_record_without_a_key_is_quarantined_and_the_run_is_partial(make_pipeline: Any) -> None:
    client = PlatformClient("https://api.example.test", TOKEN, transport=httpx.MockTransport(_comments))
    pipeline = make_pipeline()
    options = {"base_url": "https://api.example.test", "access_token": TOKEN, "client": client}
    result = sync(pipeline, ["lesson_comments"], source_options=options)
    assert result.is_partial and result.report.failed == {}
    assert sorted(row[0] for row in query(pipeline, "select id from lesson_comments")) == [1, 2]
    [(resource, reason, record_id, raw_json)] = query(
        pipeline, "select resource, reason, record_id, raw_json from _platform_quarantine"
    )
    assert (resource, reason, record_id) == ("lesson_comments", "no key: id is missing, null or empty", None)
    assert TOKEN not in raw_json and json.loads(raw_json)["text"] == "my token is ***"
