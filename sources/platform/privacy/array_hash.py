"""The pseudonyms of many values at once: the HMAC of `settings.py`, computed by DuckDB over an Arrow array.

Why DuckDB: it lets go of Python's interpreter lock while it computes, and the extract is bound by that
lock (one core busy, the other mostly idle, measured in `bench/results/`). A million rows name about
1.7 million distinct values table by table; hashed in Python they held the lock for seconds that the
sync's other threads waited for. The values are normalised first as `settings.normaliser` does: by
Arrow's string kernels where they give the same text (documents and phones always; emails and names that
are ASCII), and in Python for the rest (Python's Unicode rules for case and spaces, which neither Arrow nor
SQL share), so the pseudonyms are the very same (a test checks). Normalising each value in Python held the
lock about 1 µs a value, a third of the hashing's cost (2026-12-07 profile).

Each query costs about 1.5 ms to plan, more than 1,000 values take to hash in Python: only arrays of at
least `MIN_VALUES` come here. One in-memory connection per thread (a connection is not shared between
threads), with one DuckDB thread: the query runs in the calling thread, beside the others.
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sources.platform.privacy.fields import DOCUMENTS, EMAILS, PHONES
from sources.platform.privacy.settings import PSEUDONYM_HEX, PrivacySettings, normaliser

MIN_VALUES = 2_000

# HMAC (RFC 2104): sha256(key XOR opad || sha256(key XOR ipad || message)); `sha256` gives hex text
_HMAC = (
    f"SELECT left(sha256($outer::BLOB || unhex(sha256($inner::BLOB || encode(value)))), {PSEUDONYM_HEX})"
    " AS pseudonym FROM values_to_hash"
)

# The ASCII characters Python's `str.split()` and `str.strip()` take for spaces (`str.isspace`)
_ASCII_SPACES = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
# ... of which Arrow's `ascii_split_whitespace` does not split on these four
_SEPARATORS = "[\\x1c-\\x1f]"


class ArrayHasher:
    """`pseudonyms(group, values)` for an array of raw values: each one's pseudonym, nulls kept null."""

    def __init__(self, settings: PrivacySettings) -> None:
        self._settings = settings
        self._local = threading.local()

    def pseudonyms(self, group: str, values: pa.Array) -> pa.Array:
        inner, outer = self._settings.pad_keys()
        texts = normalised(group, values)
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


def normalised(group: str, values: pa.Array) -> pa.Array:
    """`settings.normaliser(group)` of each value (strings; nulls kept), by Arrow's kernels where they
    give Python's text: removing what is not an ASCII letter or digit is the same on any text, and on
    ASCII text Python's case and spaces are ASCII's (but for the separators \\x1c-\\x1f, spaces to
    Python only). Emails and names with other characters are normalised in Python, those values only."""
    if group == DOCUMENTS:
        return pc.ascii_upper(pc.replace_substring_regex(values, "[^0-9A-Za-z]", ""))
    if group == PHONES:
        return pc.replace_substring_regex(values, "[^0-9]", "")
    other = pc.invert(pc.fill_null(pc.string_is_ascii(values), True))
    if group == EMAILS:
        fast = pc.ascii_lower(pc.utf8_trim(values, _ASCII_SPACES))
    else:  # names and addresses: runs of spaces as one, none at the ends, case folded
        single = pc.utf8_trim(pc.binary_join(pc.ascii_split_whitespace(values), " "), " ")
        fast = pc.ascii_lower(single)
        separators = pc.fill_null(pc.match_substring_regex(values, _SEPARATORS), False)
        other = pc.or_(other, separators)
    if not pc.any(other).as_py():
        return fast
    clean = normaliser(group)
    slow = pa.array([clean(value) for value in values.filter(other).to_pylist()], pa.string())
    return pc.replace_with_mask(fast, other, slow)
