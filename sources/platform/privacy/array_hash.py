"""The pseudonyms of many values at once: the HMAC of `settings.py`, computed by DuckDB over an Arrow array.

Why DuckDB: it lets go of Python's interpreter lock while it computes, and the extract is bound by that
lock (one core busy, the other mostly idle, measured in `bench/results/`). A million rows name about
1.7 million distinct values table by table; hashed in Python they held the lock for seconds that the
sync's other threads waited for. The values are normalised in Python first (`settings.normaliser`,
whose Unicode rules SQL does not share), so the pseudonyms are the very same (a test checks).

Each query costs about 1.5 ms to plan, more than 1,000 values take to hash in Python: only arrays of at
least `MIN_VALUES` come here. One in-memory connection per thread (a connection is not shared between
threads), with one DuckDB thread: the query runs in the calling thread, beside the others.
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

from sources.platform.privacy.settings import PSEUDONYM_HEX, PrivacySettings, normaliser

MIN_VALUES = 2_000

# HMAC (RFC 2104): sha256(key XOR opad || sha256(key XOR ipad || message)); `sha256` gives hex text
_HMAC = (
    f"SELECT left(sha256($outer::BLOB || unhex(sha256($inner::BLOB || encode(value)))), {PSEUDONYM_HEX})"
    " AS pseudonym FROM values_to_hash"
)


class ArrayHasher:
    """`pseudonyms(group, values)` for an array of raw values: each one's pseudonym, nulls kept null."""

    def __init__(self, settings: PrivacySettings) -> None:
        self._settings = settings
        self._local = threading.local()

    def pseudonyms(self, group: str, values: pa.Array) -> pa.Array:
        inner, outer = self._settings.pad_keys()
        clean = normaliser(group)
        texts = pa.array([None if v is None else clean(v) for v in values.to_pylist()], pa.string())
        connection = self._connection()
        connection.register("values_to_hash", pa.table({"value": texts}))
        try:
            params = {"inner": inner + f"{group}\x00".encode(), "outer": outer}
            result = connection.sql(_HMAC, params=params).to_arrow_table()
        finally:
            connection.unregister("values_to_hash")
        return result.column("pseudonym").combine_chunks()

    def _connection(self) -> duckdb.DuckDBPyConnection:
        connection: duckdb.DuckDBPyConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = duckdb.connect(config={"threads": 1})
            self._local.connection = connection
        return connection
