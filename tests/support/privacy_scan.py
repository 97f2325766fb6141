"""Finding personal values anywhere: the sandbox world's truth, and scans of a warehouse, files and text."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from sandbox.world.people import DOMAINS, People, Person, cpf_is_valid

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# Runs of digits with the punctuation CPFs and phones are written with, not inside a longer word (a hex
# pseudonym): compared as digits.
DIGITS = re.compile(r"(?<![0-9A-Za-z])\+?\d[\d.\-() ]{7,}\d(?![0-9A-Za-z])")
CPF_WRITTEN = re.compile(r"\d{3}\.\d{3}\.\d{3}-\d{2}")


@dataclass
class Truth:
    """The raw personal values the sandbox's world gives its people."""

    emails: set[str] = field(default_factory=set)
    documents: set[str] = field(default_factory=set)
    phones: set[str] = field(default_factory=set)  # full numbers with country and area code
    names: set[str] = field(default_factory=set)  # full names (buyers, clients, authors, the seller)

    @classmethod
    def of_world(cls, seed: int, pids: Iterable[int]) -> Truth:
        people = People(seed)
        truth = cls()
        for pid in pids:
            person = people.get(pid)
            truth.emails.add(person.email.lower())
            truth.documents.add(person.document)
            truth.phones.add(person.phone)
            truth.names.add(person.name)
        return truth

    def found_in(self, text: str) -> list[str]:
        """The truth's values in `text` (emails case-insensitive, numbers by their digits)."""
        # the truth's, and any other address at the sandbox's mail domains: a bare email shape is not enough,
        # the bytes of a DuckDB file hold chance ones ('xG@1.M')
        hits = [found for found in EMAIL.findall(text) if self.is_personal_email(found)]
        for number in DIGITS.findall(text):
            digits = re.sub(r"\D", "", number)
            if digits in self.documents or digits in self.phones or looks_personal(number, digits):
                hits.append(number)
        hits.extend(name for name in self.names if name in text)
        return hits

    def is_personal_email(self, found: str) -> bool:
        """An address of the truth, or any at the sandbox's mail domains; in raw bytes the match may run on
        into the bytes around it ('gmail.comA1')."""
        address = found.lower()
        domain = address.rpartition("@")[2]
        return any(email in address for email in self.emails) or domain.startswith(DOMAINS)


def looks_personal(token: str, digits: str) -> bool:
    """Shaped as a CPF written with its punctuation (with valid check digits) or as the sandbox's mobile
    phones (55, area code, 9 and eight digits)."""
    if CPF_WRITTEN.fullmatch(token.strip()) and cpf_is_valid(digits):
        return True
    return len(digits) == 13 and digits.startswith("55") and digits[4] == "9"


def any_email(text: str) -> list[str]:
    return EMAIL.findall(text)


def warehouse_texts(path: str | Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every value of every column of every table in every schema of a DuckDB file."""
    with duckdb.connect(str(path), read_only=True) as connection:
        tables = connection.execute(
            "select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE'"
        ).fetchall()
        for schema, table in tables:
            columns = connection.execute(
                "select column_name from information_schema.columns "
                "where table_schema = ? and table_name = ?",
                [schema, table],
            ).fetchall()
            for (column,) in columns:
                rows = connection.execute(
                    f'select distinct cast("{column}" as varchar) from "{schema}"."{table}" '
                    f'where "{column}" is not null'
                ).fetchall()
                for (value,) in rows:
                    yield f"{schema}.{table}.{column}", value


def sqlite_texts(path: str | Path) -> Iterator[tuple[str, str]]:
    with sqlite3.connect(str(path)) as connection:
        for (table,) in connection.execute("select name from sqlite_master where type = 'table'").fetchall():
            for row in connection.execute(f'select * from "{table}"').fetchall():
                yield table, " ".join(str(value) for value in row if value is not None)


def folder_texts(folder: str | Path) -> Iterator[tuple[str, str]]:
    """Every file under a folder (state, schemas, load packages, trace), bytes read as text; parquet
    pages are scanned raw too (dlt writes them uncompressed-dictionary or snappy: strings mostly
    survive as bytes)."""
    for file in sorted(Path(folder).rglob("*")):
        if file.is_file():
            yield str(file), file.read_bytes().decode("utf-8", errors="replace")


def leaks(truth: Truth, texts: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for where, text in texts:
        hits = truth.found_in(text)
        if hits:
            found.setdefault(where, []).extend(hits[:3])
    return found


def person_traces(person: Person, settings: Any) -> set[str]:
    """What would betray the person: their raw values, and their pseudonyms where there is a key."""
    raw = {person.email, person.document, person.phone, person.name}
    if settings.key is None:
        return raw
    return raw | {
        settings.pseudonym("emails", person.email),
        settings.pseudonym("documents", person.document),
        settings.pseudonym("phones", person.phone),
        settings.pseudonym("names", person.name),
    }


def traces_found(traces: set[str], texts: Any) -> dict[str, str]:
    found = {}
    for where, text in texts:
        for trace in traces:
            if trace.lower() in text.lower():
                found[where] = trace
    return found
