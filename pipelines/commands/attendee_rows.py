"""The input of `platform-sync attendees import`: rows from a CSV or a SQL query, validated before any
request is made (name, email, CPF with its check digits or a passport, phone), duplicates marked."""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.sync.lock import run_lock
from pipelines.sync.platform_pipeline import make_pipeline
from sources.platform_client.errors import ConfigurationError

EMAIL = re.compile(r"^[^@\s,;]+@[^@\s,;]+\.[^@\s,;.]{2,}$")
PASSPORT = re.compile(r"^[A-Z0-9]{5,20}$")


@dataclass
class Row:
    """One input row, normalized when valid; `problems` says why it is not."""

    line: int
    name: str
    email: str
    document: str
    document_type: str
    phone: str
    problems: list[str] = field(default_factory=list)
    outcome: str = ""  # created | skipped | invalid | rejected | failed | not_sent | would_create
    attendee_id: str = ""
    reason: str = ""

    @property
    def key(self) -> str:
        return f"{self.document_type}:{self.document}"


def cpf_check_digits(nine: str) -> str:
    """The two check digits of a CPF's first nine digits (modulo 11)."""
    digits = [int(c) for c in nine]
    for weight in (10, 11):
        total = sum(d * w for d, w in zip(digits, range(weight, 1, -1), strict=False))
        digits.append(0 if total % 11 < 2 else 11 - total % 11)
    return f"{digits[9]}{digits[10]}"


def validate(line: int, raw: Mapping[str, Any]) -> Row:
    """A row from its columns (`name`, `email`, `document`, `phone`, optional `document_type`)."""
    get = lambda key: str(raw.get(key) or "").strip()  # noqa: E731
    name, email, document, phone, kind = get("name"), get("email").lower(), get("document"), get("phone"), ""
    problems = []
    if len(name) < 2:
        problems.append("name is missing")
    if not EMAIL.match(email):
        problems.append(f"email {email!r} is not an email address")
    kind = get("document_type").lower()
    digits = re.sub(r"[.\-\s]", "", document)
    if not kind:
        kind = "cpf" if digits.isdigit() else "passport"
    if kind == "cpf":
        if len(digits) != 11 or not digits.isdigit() or len(set(digits)) == 1:
            problems.append("document is not a CPF (11 digits)")
        elif cpf_check_digits(digits[:9]) != digits[9:]:
            problems.append("CPF check digits are wrong")
        document = digits
    elif kind == "passport":
        document = document.upper().replace(" ", "")
        if not PASSPORT.match(document):
            problems.append("passport must be 5 to 20 letters and digits")
    else:
        problems.append(f"document_type {kind!r} is not cpf or passport")
    phone_digits = re.sub(r"[+()\-\s.]", "", phone)
    if not (phone_digits.isdigit() and 10 <= len(phone_digits) <= 13):
        problems.append("phone must have 10 to 13 digits (area code included)")
    return Row(line, name, email, document, kind, phone_digits, problems)


def read_csv(path: Path) -> list[Row]:
    """Rows of a CSV with a header line; line numbers are the file's (the header is line 1)."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = {"name", "email", "document", "phone"} - {
            f.strip().lower() for f in reader.fieldnames or []
        }
        if missing:
            raise ConfigurationError(f"{path}: the header lacks the column(s) {', '.join(sorted(missing))}")
        rows = []
        for raw in reader:
            columns = {str(k).strip().lower(): v for k, v in raw.items() if k is not None}
            rows.append(validate(reader.line_num, columns))
    return rows


def read_query(sql: str, destination: str, dataset: str) -> list[Row]:
    """Rows of a SQL query on the sync's destination (read lock); line N is the query's Nth row."""
    pipeline = make_pipeline(destination, dataset)
    with run_lock(pipeline, "read", command="platform-sync attendees import --query"):
        with pipeline.sql_client() as client, client.execute_query(sql) as cursor:
            names = [str(d[0]).lower() for d in cursor.description]
            records = cursor.fetchall()
    return [validate(n, dict(zip(names, record, strict=True))) for n, record in enumerate(records, 1)]


def mark_duplicates(rows: list[Row]) -> None:
    """A valid row whose document or email an earlier valid row has is skipped, naming that line."""
    seen: dict[str, int] = {}
    for row in rows:
        if row.problems:
            row.outcome, row.reason = "invalid", "; ".join(row.problems)
            continue
        first = seen.get(row.key) or seen.get(row.email)
        if first is not None:
            row.outcome, row.reason = "skipped", f"duplicate of line {first} in this input"
            continue
        seen[row.key] = seen[row.email] = row.line
