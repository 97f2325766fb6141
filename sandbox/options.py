"""The `platform` source's ids for a sandbox world: what a user would configure for their own account.

The API gives no way to list events, communities, courses, students or deliveries, so a user configures
their ids; for the sandbox they come from its catalog (`GET /sandbox/catalog`). One builder for the demo,
the benchmark and the tests, so that all of them sync the same resources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def catalog_source_options(catalog: Mapping[str, Any], by_course: bool = True) -> dict[str, Any]:
    """`event_ids`, `community_ids`, `course_ids` and `schools` of the world the catalog describes.

    `by_course=False` leaves out the course ids: the lesson comments are then read in one walk over
    every course instead of one per course (the benchmark's contenders all read that one walk).
    """
    return {
        "event_ids": [event["id"] for event in catalog["events"]],
        "community_ids": [community["id"] for community in catalog["communities"]],
        "course_ids": [course["id"] for course in catalog["courses"]] if by_course else [],
        "schools": [
            {
                "team_slug": school["team_slug"],
                "student_slugs": school["student_slugs"],
                "delivery_ids": school["delivery_ids"],
            }
            for school in catalog["schools"]
        ],
    }
