"""A record met twice in one run (an offset-paged list that moved while it was read) is loaded once, in
its newest version (`Stream.newest_by`, dlt's `dedup_sort`), whichever page carried it first.

The sandbox serves the lists; a transport in front of it repeats one record of the first page on the
second page, in another version, the way a list shifts when a record changes while it is read.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

from pipelines.sync.platform_pipeline import sync
from sources.platform.resources import STREAMS
from sources.platform_client.client import PlatformClient
from tests.support.sync_helpers import ids, query, source_options

ITEMS_PER_PAGE = 5
LATER = "2099-01-01T00:00:00.000Z"  # an updatedAt later than any the sandbox serves


class RepeatingTransport(httpx.BaseTransport):
    """The sandbox, except that the page of `path` after the first one with records also carries that
    page's first record: in a newer version (`newer_first=False`), or the first page has the newer
    version and the next one the older."""

    def __init__(self, path: str, change: dict[str, Any], newer_first: bool) -> None:
        self.inner = httpx.HTTPTransport()
        self.path = path
        self.change = change
        self.newer_first = newer_first
        self.older: dict[str, Any] | None = None
        self.newer: dict[str, Any] | None = None
        self.repeated = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path != self.path or self.repeated:
            return response
        response.read()
        body = json.loads(response.content)
        if self.newer is None:
            if not body["items"]:  # an empty window of the list: wait for one with records
                return response
            self.older = copy.deepcopy(body["items"][0])
            self.newer = {**self.older, **self.change}
            if self.newer_first:
                body["items"][0] = self.newer
        else:
            assert self.older is not None
            body["items"].append(self.older if self.newer_first else self.newer)
            self.repeated = True
        return httpx.Response(response.status_code, headers={"content-type": "application/json"}, json=body)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("newer_first", [False, True], ids=["newer-later", "newer-first"])
@pytest.mark.parametrize(
    ("resource", "path", "change", "column", "value"),
    [
        # products are packed as Arrow pages, subscriptions stay rows with child tables
        ("products", "/store/v1/products", {"name": "Renamed", "updatedAt": LATER}, "name", "Renamed"),
        (
            "subscriptions",
            "/store/v1/subscriptions",
            {"status": "canceled", "updatedAt": LATER},
            "status",
            "canceled",
        ),
    ],
)
def test_a_record_met_twice_in_one_run_is_loaded_once_in_its_newest_version(
    sandbox, make_pipeline, resource, path, change, column, value, newer_first
):
    token = sandbox.token()
    transport = RepeatingTransport(path, change, newer_first)
    client = PlatformClient(sandbox.base_url, token, items_per_page=ITEMS_PER_PAGE, transport=transport)
    pipeline = make_pipeline()

    result = sync(
        pipeline, resources=[resource], source_options=source_options(sandbox, token, client=client)
    )

    assert result.report.failed == {}
    assert transport.repeated, "the list has no second page: lower ITEMS_PER_PAGE"
    loaded = ids(pipeline, resource)
    assert len(loaded) == len(set(loaded))
    record_id = transport.newer["id"]
    assert query(pipeline, f"select {column} from {resource} where id = '{record_id}'") == [(value,)]
    if resource == "subscriptions":  # the child rows are those of the version kept, once
        products = query(
            pipeline,
            "select count(*) from subscriptions__products p "
            f"join subscriptions s on p._dlt_parent_id = s._dlt_id where s.id = '{record_id}'",
        )
        assert products == [(len(transport.newer["products"]),)]


def test_every_merged_table_deduplicates_by_its_newest_by_column(sandbox, make_pipeline):
    """dlt's `dedup_sort` sits on `newest_by` (or the first key column), never left to dlt's default."""
    pipeline = make_pipeline()
    sync(pipeline, source_options=source_options(sandbox, sandbox.token()))
    tables = pipeline.default_schema.tables
    merged = [stream for stream in STREAMS.values() if stream.write_disposition == "merge"]
    assert merged
    for stream in merged:
        sorted_by = [
            name for name, column in tables[stream.name]["columns"].items() if column.get("dedup_sort")
        ]
        assert sorted_by == [stream.newest_by or stream.primary_key[0]], stream.name
        assert tables[stream.name]["columns"][sorted_by[0]]["dedup_sort"] == "desc"
