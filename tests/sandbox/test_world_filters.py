"""The synthetic world's filters: each returns exactly what brute force over the full listing returns."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sandbox.world import WorldError
from tests.support.world_checks import ENUMS, full, to_datetime_iso


# -- filters ----------------------------------------------------------------------------------------
def test_subscription_filters_equal_brute_force(mid):
    mid.advance(0)
    everything = full(mid.subscriptions(None, None, "creation"))
    start, end = everything[40]["updatedAt"], everything[-30]["createdAt"]
    lo, hi = to_datetime_iso(start), to_datetime_iso(end)
    by_creation = full(mid.subscriptions(lo, hi, "creation"))
    assert by_creation == [s for s in everything if start <= s["createdAt"] <= end]
    by_update = full(mid.subscriptions(lo, hi, "update"))
    expected = sorted(
        (s for s in everything if start <= s["updatedAt"] <= end), key=lambda s: (s["updatedAt"], s["id"])
    )
    assert by_update == expected and by_update
    assert full(mid.subscriptions(None, None, "update")) == sorted(
        everything, key=lambda s: (s["updatedAt"], s["id"])
    )


def test_attendee_filters_equal_brute_force(mid):
    ev = max(mid.catalog()["events"], key=lambda e: len(mid.attendees(e["id"])))
    everything = full(mid.attendees(ev["id"]))
    assert everything == sorted(everything, key=lambda a: (a["modifiedAt"], a["id"]))
    assert full(mid.attendees(ev["id"], order="desc")) == everything[::-1]
    lo, hi = everything[3]["modifiedAt"], everything[-3]["modifiedAt"]
    got = full(mid.attendees(ev["id"], modified_gte=to_datetime_iso(lo), modified_lte=to_datetime_iso(hi)))
    assert got == [a for a in everything if lo <= a["modifiedAt"] <= hi]
    for status in ENUMS["attendee.status"]:
        assert full(mid.attendees(ev["id"], status=status)) == [
            a for a in everything if a["status"] == status
        ]
    ticket = everything[0]["ticketId"]
    assert full(mid.attendees(ev["id"], ticket_id=ticket)) == [
        a for a in everything if a["ticketId"] == ticket
    ]
    for needle in (
        everything[1]["name"].split()[0].upper(),
        everything[2]["email"][:6],
        everything[0]["document"],
    ):
        expected = [
            a
            for a in everything
            if any(needle.casefold() in a[f].casefold() for f in ("name", "email", "document"))
        ]
        assert full(mid.attendees(ev["id"], search=needle)) == expected and expected


def test_fiscal_document_filters_equal_brute_force(mid, mid_records):
    everything = mid_records["fiscal"]
    start, end = everything[30]["document"]["emissionDate"], everything[-30]["document"]["emissionDate"]
    window = full(mid.fiscal_documents(to_datetime_iso(start), to_datetime_iso(end)))
    assert window == [d for d in everything if start <= d["document"]["emissionDate"] <= end]
    lo, hi = to_datetime_iso(start), to_datetime_iso(end)
    doc = window[5]
    cases = {
        "status": (doc["document"]["status"], lambda d, v: d["document"]["status"] == v),
        "name": (doc["client"]["name"].split()[-1].lower(), lambda d, v: v in d["client"]["name"].lower()),
        "email": (doc["client"]["email"].upper(), lambda d, v: d["client"]["email"].lower() == v.lower()),
        "sale_id": (doc["sale"]["id"], lambda d, v: d["sale"]["id"] == v),
        "product_id": (doc["product"]["id"], lambda d, v: d["product"]["id"] == v),
        "document_id": (doc["document"]["id"], lambda d, v: d["document"]["id"] == v),
    }
    for name, (value, keep) in cases.items():
        got = full(mid.fiscal_documents(lo, hi, **{name: value}))
        assert got == [d for d in window if keep(d, value)] and got, name
    assert full(mid.fiscal_documents(lo, hi, sale_id="nope")) == []


def test_affiliation_filter_and_unknown_product(mid, mid_records):
    everything = mid_records["affiliation"]
    ids = [everything[0]["product"]["id"], everything[-1]["product"]["id"]]
    assert full(mid.affiliations(ids)) == [a for a in everything if a["product"]["id"] in ids]
    with pytest.raises(WorldError) as err:
        mid.affiliations([ids[0], "999"])
    assert err.value.status == 404


def test_lesson_comment_filters_equal_brute_force(mid, mid_records):
    everything = mid_records["comment"]
    ids = [c["id"] for c in everything]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    courses = mid.catalog()["courses"]
    lesson_course = {lid: c["id"] for c in courses for lid in c["lesson_ids"]}
    course = courses[1]["id"]
    assert full(mid.lesson_comments(course_id=course)) == [
        c for c in everything if lesson_course[c["lessonId"]] == course
    ]
    lesson = courses[0]["lesson_ids"][2]
    assert full(mid.lesson_comments(lesson_id=lesson)) == [c for c in everything if c["lessonId"] == lesson]
    assert full(mid.lesson_comments(course_id=course, lesson_id=lesson)) == []
    for status in ENUMS["comment.status"]:
        assert full(mid.lesson_comments(status=status)) == [c for c in everything if c["status"] == status]
    for flag, field in (
        ("favorite", "isFavorite"),
        ("answered", "isAnswered"),
        ("read", "isRead"),
        ("fixed", "isFixed"),
    ):
        for value in (True, False):
            got = full(mid.lesson_comments(course_id=course, **{flag: value}))
            assert got == [
                c for c in everything if c[field] is value and lesson_course[c["lessonId"]] == course
            ]
    author = mid.courses.life(ids[10] - ids[0]).author
    email = mid.people.get(author).email
    got = full(mid.lesson_comments(email=email.upper()))
    expected_ids = [
        c["id"]
        for c in everything
        if mid.people.get(mid.courses.life(c["id"] - ids[0]).author).email == email
    ]
    assert [c["id"] for c in got] == expected_ids and got


def test_community_top_posts_and_commenters(mid):
    community = mid.communities.items[0]
    t = mid.now
    for days in (7, 30, 365):
        brute = [community.post(p, t) for p in range(community.stream.count_at(t))]
        since = to_datetime_iso(mid.catalog()["clock"]) - timedelta(days=days)
        window = [p for p in brute if to_datetime_iso(p["createdAt"]) >= since and p["totalComments"] > 0]
        expected = sorted(window, key=lambda p: (-p["totalComments"], p["id"]))[:5]
        if not expected:
            with pytest.raises(WorldError):
                mid.top_commented_posts(community.id, days)
            continue
        posts = mid.top_commented_posts(community.id, days)
        assert posts == expected and len(posts) <= 5
        members = full(mid.community_commenters(community.id, days))
        assert [m["id"] for m in members] == sorted(m["id"] for m in members)
        assert all(m["posts"] and "@" in m["email"] for m in members)
    small = {m["id"] for m in full(mid.community_commenters(community.id, 7))}
    assert small <= {m["id"] for m in full(mid.community_commenters(community.id, 30))}
    with pytest.raises(WorldError) as err:
        mid.top_commented_posts(community.id, 0)
    assert (err.value.status, err.value.message) == (404, "no posts with comments to show")
    for call in (mid.top_commented_posts, mid.community_commenters):
        with pytest.raises(WorldError) as err:
            call(1234, 30)
        assert err.value.status == 403
