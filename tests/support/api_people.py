"""Every person the sandbox's API serves, found by what its values hold (issue 49): the truth of the
privacy scans taken from the API itself, not from our field declarations nor a range of the world's people.

Every operation the sync reads is asked with plain httpx (`ApiTruth`); in the answers,
- an email (any address) names a person: the sandbox writes a person's id into their address
  (`first.last<pid>@domain`), so the person's name, CPF and phone join the truth;
- a string made of the world's first and last names is a person's name wherever it is (a comment's
  author has no email);
and each place (the key and the key of the object or list holding it) where such a value was served is
noted, to be compared with the personal fields the source declares (`fields.PERSONAL`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from sandbox.world.people import FIRST, LAST, People, Person
from sources.platform.privacy.fields import RecordPlan, plan_for
from sources.platform.resources import stream_models
from tests.support.api_truth import ApiTruth
from tests.support.privacy_scan import EMAIL, Truth

LOCAL_PID = re.compile(r"(\d+)$")
NAME_WORDS = frozenset(FIRST) | frozenset(LAST)
Place = tuple[str | None, str]  # (the key holding the object or list, the field's key)


@dataclass
class Served:
    """What the API served: the people in it, and the places their values were found."""

    truth: Truth = field(default_factory=Truth)
    places: dict[Place, set[str]] = field(default_factory=dict)  # place -> kinds (emails, names, ...)
    records: int = 0


def served_people(api: ApiTruth, catalog: Mapping[str, Any], seed: int) -> Served:
    """Read every operation the sync reads and find the people in the answers."""
    people = People(seed)
    served = Served()
    bodies = [record for body in _bodies(api, catalog) for record in _records(body)]
    known: dict[str, Person] = {}
    for body in bodies:
        for _, _, text in _leaves(body, None):
            for email in EMAIL.findall(text):
                person = _person_of(people, email)
                if person is not None:
                    known[person.email.lower()] = person
    for person in known.values():
        served.truth.emails.add(person.email.lower())
        served.truth.documents.add(person.document)
        served.truth.phones.add(person.phone)
        served.truth.names.add(person.name)
    for body in bodies:
        served.records += 1
        for parent, key, text in _leaves(body, None):
            kinds = _kinds(text, served.truth)
            if kinds:
                served.places.setdefault((parent, key), set()).update(kinds)
                if "names" in kinds:
                    served.truth.names.add(text)
    return served


def declared_places() -> set[Place]:
    """The places the source declares personal: each stream model's personal fields, by the key of the
    object or list holding them (None at a record's top level)."""
    places: set[Place] = set()
    for model in stream_models().values():
        _declared(plan_for(model), None, places)
    return places


def _declared(plan: RecordPlan, parent: str | None, places: set[Place]) -> None:
    places.update((parent, key) for key in plan.fields)
    for key, child in {**plan.nested, **plan.lists}.items():
        _declared(child, key, places)


def _person_of(people: People, email: str) -> Person | None:
    local = email.lower().partition("@")[0]
    found = LOCAL_PID.search(local)
    if found is None:
        return None
    person = people.get(int(found.group(1)))
    return person if person.email.lower() == email.lower() else None


def _kinds(text: str, truth: Truth) -> set[str]:
    kinds = set()
    if text.lower() in truth.emails:
        kinds.add("emails")
    digits = re.sub(r"\D", "", text)
    if digits and digits in truth.documents and len(digits) == len(text.replace(".", "").replace("-", "")):
        kinds.add("documents")
    if digits and digits in truth.phones:
        kinds.add("phones")
    words = text.split()
    if len(words) >= 2 and words[0] in FIRST and all(word in NAME_WORDS for word in words[1:]):
        kinds.add("names")
    return kinds


def _leaves(value: Any, parent: str | None, key: str | None = None) -> Iterator[tuple[str | None, str, str]]:
    """(the key of the holding object or list, the key, the text) of every string or number leaf."""
    if isinstance(value, dict):
        for child_key, child in value.items():
            yield from _leaves(child, key if key is not None else parent, child_key)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, parent, key)
    elif isinstance(value, str | int) and not isinstance(value, bool) and key is not None:
        yield parent, key, str(value)


def _records(body: Any) -> Iterator[Any]:
    """A list's records (an answer may be an envelope of `items`, or a bare list), or the one record."""
    if (
        isinstance(body, dict) and isinstance(body.get("items"), list) and "id" not in body
    ):  # a sale has items
        yield from body["items"]
    elif isinstance(body, list):
        yield from body
    elif body is not None:
        yield body


def _answer(api: ApiTruth, path: str, **params: Any) -> Any:
    """The answer, or None for a 404 (a community with no post to show, an id the world retired)."""
    try:
        return api.get(path, **params)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 404:
            return None
        raise


def _bodies(api: ApiTruth, catalog: Mapping[str, Any]) -> Iterator[Any]:
    """Every record of every read operation of the spec, as the API answers it (lists item by item)."""
    yield from api.pages("/store/v1/products")
    for product in catalog["products"]:
        yield _answer(api, f"/store/v1/products/{product['id']}/campaigns")
        yield _answer(api, f"/store/v1/products/{product['id']}/partners")
    yield from api.pages("/store/v1/affiliates")
    yield from api.pages("/store/v1/financial/transfers")
    subscriptions = api.subscriptions()
    yield from subscriptions
    for subscription in subscriptions[:20]:
        yield _answer(api, f"/store/v1/subscriptions/{subscription['id']}")
    yield from api.fiscal_documents()
    event_ids = [str(event["id"]) for event in catalog["events"]]
    for event_id in event_ids:
        yield _answer(api, f"/events/v1/events/{event_id}")
    yield from api.attendees(event_ids)
    yield from api.reachable_sales(event_ids).values()
    for school in catalog["schools"]:
        team = school["team_slug"]
        for student in school["student_slugs"]:
            yield from api.pages(f"/school/v1/producer/teams/{team}/students/{student}/enrollments")
        for delivery in school["delivery_ids"]:
            yield _answer(api, f"/school/v1/producer/teams/{team}/deliveries/{delivery}")
    for community in catalog["communities"]:
        yield _answer(api, f"/community/v1/posts/community/{community['id']}/top/commented", days=30)
        yield from api.pages(f"/community/v1/members/community/{community['id']}/comments", days=30)
    yield from api.pages("/course/v1/comments")
