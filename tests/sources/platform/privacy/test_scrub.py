"""The privacy settings, the keyed hash and the hook on rows, Arrow tables and free JSON (no sandbox)."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from sources.platform.models import FiscalDocument, LessonComment, Sale
from sources.platform.privacy import OFF, PrivacySettings, Scrubber, parse_privacy, personal_columns
from sources.platform.privacy.array_hash import MIN_VALUES, ArrayHasher, normalised
from sources.platform.privacy.fields import GROUPS, group_of_key
from sources.platform.privacy.settings import normalise
from sources.platform_client.errors import ConfigurationError

KEY = "k3y-for-tests-0123456789"
ON = parse_privacy({"emails": "hash", "documents": "hash", "phones": "block"}, KEY)


def _counting(hashed: list[str]) -> PrivacySettings:
    """ON's settings, noting in `hashed` every value they hash."""

    class Counting(PrivacySettings):
        def pseudonyms(self, group: str, values: Iterable[str]) -> list[str]:
            values = list(values)
            hashed.extend(values)
            return super().pseudonyms(group, values)

    return Counting(ON.modes, ON.key)


def expected(group: str, normalised: str) -> str:
    return hmac.new(KEY.encode(), f"{group}\x00{normalised}".encode(), hashlib.sha256).hexdigest()[:32]


def test_the_pseudonym_is_the_keyed_hash_of_the_normalised_value() -> None:
    assert ON.pseudonym("documents", "123.456.789-09") == expected("documents", "12345678909")
    assert ON.pseudonym("documents", "12345678909") == expected("documents", "12345678909")
    assert ON.pseudonym("emails", "  Ana.Lima@Example.COM ") == expected("emails", "ana.lima@example.com")
    assert ON.pseudonym("phones", "+55 (11) 98765-4321") == expected("phones", "5511987654321")
    # the group is part of the message: a value in two groups gets two pseudonyms
    assert ON.pseudonym("phones", "12345678909") != ON.pseudonym("documents", "12345678909")
    other = parse_privacy({"emails": "hash"}, "another-key-0123456789")
    assert other.pseudonym("emails", "ana@example.com") != ON.pseudonym("emails", "ana@example.com")


@pytest.mark.parametrize("length", [16, 63, 64, 65, 200])
def test_pseudonyms_are_hmac_sha256_for_keys_of_every_length(length: int) -> None:
    """Computed from HMAC's two keyed states (a key longer than SHA-256's block is hashed first): the
    pseudonyms of data loaded before stay the same."""
    key = ("0123456789abcdef" * 13)[:length]
    settings = parse_privacy({"names": "hash"}, key)
    values = ["Ana Lima", "  JOÃO  da Silva ", "Straße", "", "ana lima"]
    reference = [
        hmac.new(key.encode(), f"names\x00{n}".encode(), hashlib.sha256).hexdigest()[:32]
        for n in ("ana lima", "joão da silva", "strasse", "", "ana lima")
    ]
    assert settings.pseudonyms("names", values) == reference
    assert [settings.pseudonym("names", v) for v in values] == reference


def test_a_tables_columns_of_one_group_are_hashed_together_each_value_once() -> None:
    """A fiscal document's client is its destination too: the emails of both columns (and of the source)
    are looked up and hashed as one set; each column gets its own values' pseudonyms, nulls stay null."""
    hashed: list[str] = []

    clients = ["a@x.com", "b@x.com", None, "a@x.com"]
    table = pa.table(
        {
            "client__email": pa.chunked_array([clients[:1], clients[1:]]),
            "destination__email": clients,
            "source__email": ["shop@x.com"] * 4,
            "client__document": [None, "123.456.789-09", "123.456.789-09", None],
        }
    )
    out = Scrubber(_counting(hashed)).mapper(FiscalDocument, "fiscal_documents")(table, None)
    emails = [None if c is None else expected("emails", c) for c in clients]
    document = expected("documents", "12345678909")
    assert out.to_pydict() == {
        "client__email": emails,
        "destination__email": emails,
        "source__email": [expected("emails", "shop@x.com")] * 4,
        "client__document": [None, document, document, None],
    }
    assert sorted(hashed) == ["123.456.789-09", "a@x.com", "b@x.com", "shop@x.com"]


@pytest.mark.parametrize("length", [16, 64, 65, 200])
def test_many_values_hashed_in_duckdb_get_the_same_pseudonyms(length: int) -> None:
    """`ArrayHasher` (DuckDB) against the HMAC computed in Python: Unicode normalised by Python's rules,
    nulls kept, the group in the message, keys shorter and longer than SHA-256's block."""
    key = ("0123456789abcdef" * 13)[:length]
    settings = parse_privacy({"names": "hash", "emails": "hash"}, key)
    values = ["Ana Lima", None, "  JOÃO  da Silva ", "Straße", "", "ana lima", "\u00e9\u0301 \U0001f600"]
    hasher = ArrayHasher(settings)
    for group in ("names", "emails"):
        out = hasher.pseudonyms(group, pa.array(values, pa.string())).to_pylist()
        assert out == [None if v is None else settings.pseudonym(group, v) for v in values]
    assert out[0] != hasher.pseudonyms("names", pa.array(values[:1])).to_pylist()[0]


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_arrays_are_normalised_as_python_normalises_each_value(group: str) -> None:
    """`normalised` (Arrow's kernels, Python for the values it cannot do) against `settings.normalise`
    on text made of the characters where the two could part: ASCII spaces Python counts that Unicode
    does not (\\x1c-\\x1f), Unicode spaces, letters whose case differs beyond ASCII, digits of other
    scripts, punctuation."""
    alphabet = list(" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u2003aZ09.-@_ÇçßŠİıΣς٣\U0001f600")
    rng = random.Random(group)
    values = ["".join(rng.choices(alphabet, k=rng.randint(0, 12))) for _ in range(3_000)]
    values += [None, "", "  Ana   LIMA ", "123.456.789-09", "(11) 9 8765-4321", "A@X.COM "]
    ascii_only = alphabet[:10] + list("aZ09.-@_")
    values += ["".join(rng.choices(ascii_only, k=rng.randint(0, 12))) for _ in range(500)]
    out = normalised(group, pa.array(values, pa.string())).to_pylist()
    assert out == [None if v is None else normalise(group, v) for v in values]


def test_a_table_with_many_distinct_values_is_hashed_in_duckdb_with_the_same_result() -> None:
    """Above `MIN_VALUES` distinct values of a group, the table's columns are hashed by DuckDB, not in
    Python, and come out as they would have (columns of a group together, nulls, two threads at once)."""
    hashed: list[str] = []
    many = 2 * MIN_VALUES  # a third of the documents and a seventh of the emails are null
    clients = [f"Buyer{i}@X.com" if i % 7 else None for i in range(many)]
    table = pa.table(
        {
            "client__email": clients,
            "destination__email": list(reversed(clients)),
            "client__document": [f"{i:011d}" if i % 3 else None for i in range(many)],
        }
    )
    scrubber = Scrubber(_counting(hashed))
    step = scrubber.mapper(FiscalDocument, "fiscal_documents")
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda t: step(t, None), [table, table]))
    emails = [None if c is None else expected("emails", c.lower()) for c in clients]
    documents = [expected("documents", f"{i:011d}") if i % 3 else None for i in range(many)]
    for out in outs:
        assert out.schema == table.schema
        assert out.to_pydict() == {
            "client__email": emails,
            "destination__email": list(reversed(emails)),
            "client__document": documents,
        }
    assert hashed == []  # none in Python
    small = table.slice(0, 10)
    assert step(small, None).to_pydict() == outs[0].slice(0, 10).to_pydict()
    assert len(hashed) == 8 + 8 + 6  # the small table's in Python: 8 emails in each column, 6 documents


@pytest.mark.parametrize(
    ("privacy", "key", "message"),
    [
        pytest.param({"email": "hash"}, KEY, "unknown privacy group 'email'", id="group"),
        pytest.param({"emails": "sha256"}, KEY, "privacy emails = 'sha256'", id="mode"),
        pytest.param({"emails": "hash"}, None, "privacy: emails = hash needs privacy_key", id="no-key"),
        pytest.param({"emails": "hash"}, "k9x2", "shorter than 16 characters", id="short-key"),
        pytest.param("emails", KEY, "must be a table", id="not-a-table"),
    ],
)
def test_bad_settings_are_one_clear_line(privacy: object, key: str | None, message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_privacy(privacy, key)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    if key:
        assert key not in str(raised.value)


def test_the_record_names_modes_and_key_id_never_the_key() -> None:
    record = ON.record()
    assert record["modes"] == {
        "documents": "hash",
        "emails": "hash",
        "phones": "block",
        "names": "keep",
        "addresses": "keep",
    }
    assert record["key_id"] == ON.key_id() and len(record["key_id"]) == 12
    assert KEY not in json.dumps(record)
    assert OFF.record() == {"modes": dict.fromkeys(record["modes"], "keep"), "key_id": None}


def test_the_warehouse_columns_of_a_sale_buyer() -> None:
    persons = {tuple(sorted(p.columns)): p.table for p in personal_columns(Sale, "sales")}
    buyer = next(cols for cols in persons if "buyer__email" in cols)
    assert buyer == tuple(
        sorted(
            [
                "buyer__name",
                "buyer__email",
                "buyer__document",
                "buyer__phone",
                "buyer__phone2",
                "buyer__phone3",
                "buyer__address__street",
                "buyer__address__number",
                "buyer__address__complement",
                "buyer__address__zip_code",
                "buyer__address__neighborhood",
            ]
        )
    )
    assert persons[("email", "name")] in {"sales__affiliates", "sales__partners"}
    tables = {p.table for p in personal_columns(Sale, "sales")}
    assert tables == {"sales", "sales__affiliates", "sales__partners"}


def _sale() -> dict:
    return {
        "id": "1",
        "product": {"id": "p", "name": "Curso de Python"},
        "total": {"value": 10, "currency": "BRL"},
        "buyer": {
            "name": "Ana Lima",
            "email": "Ana@Example.com",
            "document": "123.456.789-09",
            "phone": "5511987654321",
            "address": {"street": "Rua A", "city": "Recife", "zipCode": "50000000"},
        },
        "affiliates": [{"name": "Bia", "email": "bia@example.com", "netGain": {"value": 1}}],
        "refund": {"requesterName": "Ana Lima", "value": {"value": 10}},
    }


def test_a_row_is_changed_as_each_group_says() -> None:
    row = _sale()
    Scrubber(ON).mapper(Sale, "sales")(row, None)
    assert row["buyer"] == {
        "name": "Ana Lima",
        "email": expected("emails", "ana@example.com"),
        "document": expected("documents", "12345678909"),
        "phone": None,
        "address": {"street": "Rua A", "city": "Recife", "zipCode": "50000000"},
    }
    assert row["affiliates"][0] == {
        "name": "Bia",
        "email": expected("emails", "bia@example.com"),
        "netGain": {"value": 1},
    }
    assert row["product"] == {"id": "p", "name": "Curso de Python"}  # a product's name is not a person's


def test_a_forgotten_person_is_blanked_in_rows_and_tables_and_counted() -> None:
    forgotten = {"emails": frozenset({expected("emails", "ana@example.com")}), "documents": frozenset()}
    scrubber = Scrubber(parse_privacy({}, KEY), lambda: forgotten)
    assert scrubber.changes_anything()
    row = _sale()
    scrubber.mapper(Sale, "sales")(row, None)
    assert row["buyer"] == {
        "name": None,
        "email": None,
        "document": None,
        "phone": None,
        "address": {"street": None, "city": "Recife", "zipCode": None},
    }
    assert row["refund"] == {"requesterName": None, "value": {"value": 10}}  # names nobody: goes with her
    assert row["affiliates"][0]["email"] == "bia@example.com"  # keep: another person, untouched
    assert row["total"] == {"value": 10, "currency": "BRL"}
    table = pa.table(
        {
            "client__email": ["ana@example.com", "ANA@example.com", "carl@example.com"],
            "client__name": ["Ana", "Ana L", "Carl"],
            "base_value__value": [1.0, 2.0, 3.0],
        }
    )
    out = scrubber.mapper(FiscalDocument, "fiscal_documents")(table, None)
    assert out.to_pydict() == {
        "client__email": [None, None, "carl@example.com"],
        "client__name": [None, None, "Carl"],
        "base_value__value": [1.0, 2.0, 3.0],
    }
    assert scrubber.reforgotten == 3


def test_the_comments_the_api_linked_to_a_forgotten_person_are_blanked_by_id() -> None:
    """A lesson comment names its author only; forget keeps the ids the API answered for the person's
    email (group `lesson_comments`), and later syncs blank those comments' author and text, in rows and in
    Arrow tables, names hashed or not; other comments and other tables are untouched (issue 49)."""
    forgotten = {"emails": frozenset(), "documents": frozenset(), "lesson_comments": frozenset({"7", "9"})}
    for privacy in ({}, {"names": "hash"}):
        scrubber = Scrubber(parse_privacy(privacy, KEY), lambda: forgotten)
        assert scrubber.changes_anything()
        table = pa.table(
            {
                "id": pa.array([7, 8, 9, None], pa.int64()),
                "author": ["Ana", "Bia", "Ana", "Cid"],
                "text": ["hi", "yo", "ok", "hm"],
                "lesson_id": [1, 1, 2, 2],
            }
        )
        out = scrubber.mapper(LessonComment, "lesson_comments")(table, None).to_pydict()
        assert out["author"][0] is None and out["author"][2] is None
        assert out["text"] == [None, "yo", None, "hm"]
        assert out["id"] == [7, 8, 9, None] and out["lesson_id"] == [1, 1, 2, 2]
        assert out["author"][1] == ("Bia" if not privacy else ON.pseudonym("names", "Bia"))
        rows = [{"id": 9, "author": "Ana", "text": "ok"}, {"id": 10, "author": "Ana", "text": "no"}]
        scrubber.mapper(LessonComment, "lesson_comments")(rows, None)
        assert [(r["author"] is None, r["text"]) for r in rows] == [(True, None), (False, "no")]
        assert scrubber.reforgotten == 3
        # a person forgotten by comment ids only changes no other table, nor the order of the rows' path
        sale = _sale()
        scrubber.mapper(Sale, "sales")(sale, None)
        assert sale["buyer"]["email"] == "Ana@Example.com"
    # without a key nothing was kept, and nothing is recognised
    assert not Scrubber(parse_privacy({}, None), lambda: forgotten).changes_anything()


def test_an_arrow_table_is_hashed_by_distinct_values_and_blocked_as_nulls() -> None:
    table = pa.table(
        {
            "client__email": ["a@x.com", None, "A@X.com"],
            "client__cellphone": ["5511987654321", "1", None],
            "id": ["1", "2", "3"],
        }
    )
    out = Scrubber(ON).mapper(FiscalDocument, "fiscal_documents")(table, None)
    assert out.schema == table.schema
    assert out.to_pydict() == {
        "client__email": [expected("emails", "a@x.com"), None, expected("emails", "a@x.com")],
        "client__cellphone": [None, None, None],
        "id": ["1", "2", "3"],
    }


def test_free_json_by_key_name_and_the_quarantine_and_departure_rows() -> None:
    scrubber = Scrubber(ON)
    data = {"producerId": "1", "email": "A@x.com", "name": "Ana", "learnerEmail": "b@x.com", "invoiceId": "9"}
    assert scrubber.json(data) == {
        "producerId": "1",
        "email": expected("emails", "a@x.com"),
        "name": "Ana",
        "learnerEmail": expected("emails", "b@x.com"),
        "invoiceId": "9",
    }
    assert group_of_key("invoiceCustomerDocument") == "documents"
    assert group_of_key("productName") is None
    mapper = scrubber.mapper(Sale, "sales")

    class Meta:
        table_name = "_platform_quarantine"

    quarantined = {"resource": "sales", "raw_json": json.dumps({"buyer": {"email": "a@x.com", "phone": "1"}})}
    mapper(quarantined, Meta())
    assert json.loads(quarantined["raw_json"]) == {
        "buyer": {"email": expected("emails", "a@x.com"), "phone": None}
    }
    Meta.table_name = "_platform_departures"
    departure = {"field_path": "buyer.cpf", "kind": "unlisted_field", "values": [{"value": "123.456.789-09"}]}
    mapper(departure, Meta())
    assert departure["values"] == [{"value": expected("documents", "12345678909")}]


def test_a_quarantined_record_is_walked_with_its_resources_model() -> None:
    """Keys a name alone does not make personal (a sale's `producer.name`: `name` is a product's too) are
    changed in a quarantined record as in its table, and a forgotten buyer takes the names beside them
    (issue 49: quarantine matched as the tables are, not by key names only)."""

    class Meta:
        table_name = "_platform_quarantine"

    record = {"id": "1", "producer": {"id": 5, "name": "Seller Sa"}, "product": {"name": "Curso"},
              "buyer": {"email": "ana@example.com", "name": "Ana"}}  # fmt: skip
    hashed = parse_privacy({"emails": "hash", "names": "hash"}, KEY)
    row = {"resource": "sales", "raw_json": json.dumps(record)}
    Scrubber(hashed).mapper(Sale, "sales")(row, Meta())
    out = json.loads(row["raw_json"])
    assert out["producer"] == {"id": 5, "name": hashed.pseudonym("names", "Seller Sa")}
    assert out["product"] == {"name": "Curso"}  # not a person's
    assert out["buyer"]["name"] == hashed.pseudonym("names", "Ana")

    forgotten = {"emails": frozenset({expected("emails", "ana@example.com")}), "documents": frozenset()}
    row = {"resource": "sales", "raw_json": json.dumps(record)}
    Scrubber(parse_privacy({}, KEY), lambda: forgotten).mapper(Sale, "sales")(row, Meta())
    out = json.loads(row["raw_json"])
    assert out["buyer"] == {"email": None, "name": None}
    assert out["producer"] == {"id": 5, "name": None}  # names nobody: goes with the buyer
    assert out["product"] == {"name": "Curso"}


def test_a_departure_is_found_by_its_path_in_its_resources_model() -> None:
    """A departure's original values are changed as the field at its path is in the resource's table
    (`producer.name` a person's name, `product.name` not), a field new to the model by its key's name, and
    another resource's departure by key name only (issue 49: departures as the tables are)."""

    class Meta:
        table_name = "_platform_departures"

    hashed = parse_privacy({"emails": "hash", "names": "hash"}, KEY)
    mapper = Scrubber(hashed).mapper(Sale, "sales")

    def departed(path: str, resource: str = "sales") -> object:
        values = [{"value": "Ana"}]
        mapper({"resource": resource, "field_path": path, "kind": "unconvertible", "values": values}, Meta())
        return values[0]["value"]

    assert departed("producer.name") == hashed.pseudonym("names", "Ana")
    assert departed("product.name") == "Ana"  # the model says: not a person's
    assert departed("buyer.buyerName") == hashed.pseudonym("names", "Ana")  # new to the model: by its name
    assert departed("buyer.email") == hashed.pseudonym("emails", "Ana")
    assert departed("product.name", resource="products") == hashed.pseudonym("names", "Ana")  # no model here


def test_nothing_changes_without_settings_and_the_destination_is_not_asked() -> None:
    asked = []
    scrubber = Scrubber(OFF, lambda: asked.append(1) or {})  # type: ignore[func-returns-value]
    assert not scrubber.changes_anything()
    assert asked == []
    assert isinstance(PrivacySettings({}).mode("emails"), str)


def test_a_batch_of_rows_is_changed_as_each_row_alone_and_people_are_hashed_once() -> None:
    """The step takes a resource's batch whole: the values of a group are gathered from every row and level
    (nested objects, lists), hashed together, and put back; a value met again, in the batch or a later
    one, is not hashed again."""
    alone = [_sale() for _ in range(3)]
    batch = [_sale() for _ in range(3)]
    alone[1]["buyer"]["email"] = batch[1]["buyer"]["email"] = "other@example.com"
    alone[2]["affiliates"] = batch[2]["affiliates"] = None  # not a list: left as it is
    for row in alone:
        Scrubber(ON).mapper(Sale, "sales")(row, None)
    hashed: list[str] = []

    scrubber = Scrubber(_counting(hashed))
    mapper = scrubber.mapper(Sale, "sales")
    assert mapper(batch, None) is batch
    assert batch == alone
    assert sorted(hashed) == sorted(
        ["Ana@Example.com", "other@example.com", "bia@example.com", "123.456.789-09"]
    )
    again = [_sale()]
    mapper(again, None)
    assert again == alone[:1]
    assert len(hashed) == 4  # every value of the second batch was kept from the first


def test_a_batch_naming_a_forgotten_person_is_blanked_row_by_row() -> None:
    forgotten = {"emails": frozenset({expected("emails", "ana@example.com")}), "documents": frozenset()}
    scrubber = Scrubber(ON, lambda: forgotten)
    batch = [_sale(), _sale()]
    batch[1]["buyer"]["email"] = "carl@example.com"
    scrubber.mapper(Sale, "sales")(batch, None)
    assert batch[0]["buyer"]["email"] is None and batch[0]["buyer"]["name"] is None
    assert batch[1]["buyer"]["email"] == expected("emails", "carl@example.com")
    assert batch[1]["buyer"]["name"] == "Ana Lima"  # names are kept by ON; only the forgotten lose theirs
    assert scrubber.reforgotten == 1
