"""Where personal data lives: the fields of the API's models in each column group, declared once.

`PERSONAL` names, per pydantic model, the fields that hold a person's data and their group. Everything
else is derived from it: the walk of a record as the readers yield it (`RecordPlan`, API keys), the
columns of each warehouse table (`personal_columns`, dlt's names, child tables included) and, for JSON
whose shape no model describes (webhook deliveries, quarantined records), a guess by key name
(`group_of_key`).

A *person* is one object level of a record that holds personal fields (a sale's `buyer`, one of its
`affiliates`, a fiscal document's `client`): a forgotten person is blanked at that level, all groups.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, get_args, get_origin

from dlt.common.normalizers.naming.snake_case import NamingConvention
from pydantic import BaseModel

from sources.platform.models import (
    Affiliation,
    Attendee,
    CommunityMember,
    LessonComment,
    ManualAttendee,
    Partner,
    Sale,
    SaleParty,
)
from sources.platform.models.community import PostMember
from sources.platform.models.financial import (
    ClientAddress,
    DestinationAddress,
    FiscalDocumentClient,
    FiscalDocumentDestination,
    FiscalDocumentSource,
    SourceAddress,
)
from sources.platform.models.hints import unwrap_optional
from sources.platform.models.store import (
    Phone,
    Product,
    SaleBuyer,
    SaleBuyerAddress,
    SaleRecipient,
    SaleRefund,
    SubscriptionClient,
    SubscriptionInterruption,
)

DOCUMENTS, EMAILS, PHONES, NAMES, ADDRESSES = "documents", "emails", "phones", "names", "addresses"
GROUPS: tuple[str, ...] = (DOCUMENTS, EMAILS, PHONES, NAMES, ADDRESSES)
# The groups that identify a person (what `forget` is given and matches on).
IDENTIFYING: tuple[str, ...] = (EMAILS, DOCUMENTS)

_STREET = {"street": ADDRESSES, "number": ADDRESSES, "complement": ADDRESSES, "zipCode": ADDRESSES}
# Per model: field -> group; a dotted key reaches into a shared model (`IdName`) whose other uses are
# not personal (a product's name). City, state and country stay: they are what the marts group by.
PERSONAL: dict[type[BaseModel], dict[str, str]] = {
    SaleBuyer: {
        "name": NAMES, "email": EMAILS, "document": DOCUMENTS,
        "phone": PHONES, "phone2": PHONES, "phone3": PHONES,
    },
    SaleBuyerAddress: {**_STREET, "neighborhood": ADDRESSES},
    SaleRecipient: {"name": NAMES, "email": EMAILS, "document": DOCUMENTS, "phone": PHONES},
    SaleParty: {"name": NAMES, "email": EMAILS},
    SaleRefund: {"requesterName": NAMES},
    # The seller's own name is a person's name like the others (issue 49: raw beside the hashed recipient
    # name of the same person, which it gave away): hashed, blocked or kept with the names.
    Sale: {"affiliate.name": NAMES, "producer.name": NAMES},
    SubscriptionClient: {"name": NAMES, "email": EMAILS},
    # Who cancelled or suspended: the client's name, or the seller's (issue 49: 112 names left raw).
    SubscriptionInterruption: {"responsible": NAMES},
    Product: {"author": NAMES},
    Phone: {"number": PHONES},
    FiscalDocumentClient: {
        "name": NAMES, "email": EMAILS, "document": DOCUMENTS,
        "cellphone": PHONES, "telephone": PHONES, "telephone2": PHONES,
    },
    ClientAddress: {**_STREET, "neighborhood": ADDRESSES},
    FiscalDocumentDestination: {
        "companyName": NAMES, "taxId": DOCUMENTS, "email": EMAILS,
        "tel": PHONES, "tel2": PHONES, "cell": PHONES,
    },
    DestinationAddress: {**_STREET, "district": ADDRESSES},
    FiscalDocumentSource: {
        "companyName": NAMES, "document": DOCUMENTS, "email": EMAILS,
        "tel": PHONES, "tel2": PHONES, "cell": PHONES,
    },
    SourceAddress: {**_STREET, "district": ADDRESSES},
    Attendee: {
        "name": NAMES, "email": EMAILS, "document": DOCUMENTS, "phone": PHONES,
        "invoiceCustomerName": NAMES, "invoiceCustomerEmail": EMAILS, "invoiceCustomerDocument": DOCUMENTS,
    },
    ManualAttendee: {"name": NAMES, "email": EMAILS, "document": DOCUMENTS, "phoneNumber": PHONES},
    Partner: {"name": NAMES, "email": EMAILS},
    Affiliation: {"customer.name": NAMES},
    PostMember: {"email": EMAILS},
    CommunityMember: {"name": NAMES, "email": EMAILS},
    LessonComment: {"author": NAMES},
}  # fmt: skip


@dataclass(frozen=True)
class Linked:
    """Records that name a person without carrying an identifier of theirs, which the API links to them
    by one (issue 49): a lesson comment holds only its author's name, and the comments list filters by
    the author's `email`. `forget` asks the API for the person's records (`operation` with `query` set to
    the identifier) and blanks `blanked` in the rows of `table` whose `key` it answered; the forgotten
    list keeps those keys (group `table`), and later syncs blank them again on the way in."""

    table: str
    operation: str
    group: str  # the identifier the API links by (one of IDENTIFYING)
    query: str
    key: str
    blanked: tuple[str, ...]


LINKED: tuple[Linked, ...] = (
    Linked("lesson_comments", "list_lesson_comments", EMAILS, "email", "id", ("author", "text")),
)
LINKED_BY_TABLE: Mapping[str, Linked] = {linked.table: linked for linked in LINKED}


# Two people at one level of a record: an attendee, and the customer of the invoice that paid the ticket.
APART: dict[type[BaseModel], tuple[frozenset[str], ...]] = {
    Attendee: (frozenset({"invoiceCustomerName", "invoiceCustomerEmail", "invoiceCustomerDocument"}),),
}

_NAMING = NamingConvention()


@dataclass(frozen=True)
class RecordPlan:
    """The personal fields of one object level (API keys -> group), its nested objects and its lists of
    objects. Built from a model by `plan_for`; empty levels are left out."""

    fields: Mapping[str, str]
    nested: Mapping[str, RecordPlan] = field(default_factory=dict)
    lists: Mapping[str, RecordPlan] = field(default_factory=dict)
    apart: tuple[frozenset[str], ...] = ()  # fields of other people at this level (`APART`)
    # For JSON walked with its model (a quarantined record): the model's keys at this level, and its
    # nested objects and lists that hold nothing personal (so their keys are not guessed by name).
    known: frozenset[str] = frozenset()
    plain: Mapping[str, RecordPlan] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.fields or self.nested or self.lists)

    @cached_property
    def identified(self) -> bool:
        """Whether this level or a nested one holds an email or a document (`has_identity`)."""
        return has_identity(self)

    @cached_property
    def people(self) -> list[dict[str, str]]:
        """The level's fields by person: the level's own person first, then those `apart`."""
        others = frozenset().union(*self.apart)
        people = [{key: group for key, group in self.fields.items() if key not in others}]
        people += [{key: group for key, group in self.fields.items() if key in keys} for keys in self.apart]
        return [person for person in people if person]


@cache
def plan_for(model: type[BaseModel]) -> RecordPlan:
    """How to walk a record of `model` to each of its personal fields."""
    return _plan(model, PERSONAL.get(model, {}))


def _plan(model: type[BaseModel], declared: Mapping[str, str]) -> RecordPlan:
    fields = {key: group for key, group in declared.items() if "." not in key}
    nested: dict[str, RecordPlan] = {}
    lists: dict[str, RecordPlan] = {}
    plain: dict[str, RecordPlan] = {}
    for key, info in model.model_fields.items():
        tp, _ = unwrap_optional(info.annotation)
        deeper = {k.split(".", 1)[1]: g for k, g in declared.items() if k.startswith(f"{key}.")}
        if get_origin(tp) is list:
            (item,) = get_args(tp)
            if _is_model(item):
                child = plan_for(item)
                (lists if child else plain)[key] = child
        elif _is_model(tp):
            child = _plan(tp, {**PERSONAL.get(tp, {}), **deeper}) if deeper else plan_for(tp)
            (nested if child else plain)[key] = child
    known = frozenset(model.model_fields)
    return RecordPlan(fields, nested, lists, APART.get(model, ()), known, plain)


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def json_groups(
    document: Mapping[str, Any], plan: RecordPlan | None, in_address: bool
) -> dict[str, str | None]:
    """The group of each key of a JSON object: the model's where `plan` knows the key (a key of the model
    that is not declared is not personal), else guessed by name (`group_of_key`)."""
    if plan is None or not plan.known:
        return {key: group_of_key(key, in_address) for key in document}
    return {
        key: plan.fields.get(key) if key in plan.known else group_of_key(key, in_address) for key in document
    }


def json_child(plan: RecordPlan | None, key: str) -> RecordPlan | None:
    """The plan of a nested object or list of a JSON object walked with `plan`."""
    if plan is None:
        return None
    return plan.nested.get(key) or plan.lists.get(key) or plan.plain.get(key)


def group_at_path(plan: RecordPlan | None, path: str) -> str | None:
    """The group of the field at a departure's path (the API's keys, list elements as `[]`:
    `buyer.email`, `items[].name`): the model's where `plan` knows the path (a key of the model that is not
    declared is not personal: a product's `name`), else guessed by name (a field new to the model)."""
    keys = [part.removesuffix("[]") for part in path.split(".") if part]
    if not keys:
        return None
    level = plan
    in_address = False
    for key in keys[:-1]:
        in_address = in_address or "address" in key.lower()
        level = json_child(level, key)
    last = keys[-1]
    if level is not None and last in level.known:
        return level.fields.get(last)
    return group_of_key(last, in_address)


@dataclass(frozen=True)
class PersonColumns:
    """One person's columns in one warehouse table: dlt column name -> group."""

    table: str
    columns: Mapping[str, str]

    def identifying(self) -> dict[str, str]:
        return {column: group for column, group in self.columns.items() if group in IDENTIFYING}


def personal_columns(model: type[BaseModel], table: str) -> list[PersonColumns]:
    """Every person of the model's records as the warehouse holds them: the root table `table` with
    nested objects flattened (`buyer__email`), lists as child tables (`sales__affiliates`)."""
    return list(_persons(plan_for(model), table, ()))


def _persons(plan: RecordPlan, table: str, prefix: tuple[str, ...]) -> Iterator[PersonColumns]:
    people = plan.people or [{}]
    own = {_column(prefix, key): group for key, group in people[0].items()}
    # A person's address is part of that person (`buyer.address.street` goes with `buyer.email`).
    pending = [(prefix, plan)]
    for key, child in plan.nested.items():
        if not has_identity(child):
            own.update(_flattened(child, (*prefix, _NAMING.normalize_path(key))))
        else:
            pending.append(((*prefix, _NAMING.normalize_path(key)), child))
    if own:
        yield PersonColumns(table, own)
    for other in people[1:]:
        yield PersonColumns(table, {_column(prefix, key): group for key, group in other.items()})
    for nested_prefix, child in pending[1:]:
        yield from _persons(child, table, nested_prefix)
    for key, child in plan.lists.items():
        child_table = _NAMING.shorten_fragments(table, *prefix, _NAMING.normalize_tables_path(key))
        yield from _persons(child, child_table, ())


def has_identity(plan: RecordPlan) -> bool:
    return any(group in IDENTIFYING for group in plan.fields.values()) or any(
        has_identity(child) for child in plan.nested.values()
    )


def _flattened(plan: RecordPlan, prefix: tuple[str, ...]) -> dict[str, str]:
    columns = {_column(prefix, key): group for key, group in plan.fields.items()}
    for key, child in plan.nested.items():
        columns.update(_flattened(child, (*prefix, _NAMING.normalize_path(key))))
    return columns


def _column(prefix: tuple[str, ...], key: str) -> str:
    return _NAMING.shorten_fragments(*prefix, _NAMING.normalize_path(key))


# JSON no model describes (webhook deliveries, quarantined records): personal keys by name.
_KEY_GROUPS: dict[str, str] = {
    key.lower(): group
    for fields in PERSONAL.values()
    for key, group in fields.items()
    if "." not in key and group != ADDRESSES and key != "number"
}


def group_of_key(key: str, in_address: bool = False) -> str | None:
    """The group of a JSON key where no model says: the declared field names (`email`, `taxId`,
    `invoiceCustomerDocument`...), any key naming an email, a phone or a CPF (`learnerEmail`), and the
    street-level keys of an object under an `address` key."""
    lower = key.lower()
    if in_address:
        return ADDRESSES if lower in {"street", "number", "complement", "zipcode", "zip", "neighborhood",
                                      "district"} else None  # fmt: skip
    if lower in _KEY_GROUPS:
        return _KEY_GROUPS[lower]
    if "email" in lower:
        return EMAILS
    if "phone" in lower:
        return PHONES
    if "cpf" in lower or lower.endswith("document"):
        return DOCUMENTS
    if lower.endswith("customername") or lower.endswith("buyername") or lower.endswith("learnername"):
        return NAMES
    return None
