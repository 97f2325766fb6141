"""`GoneWorld`: the synthetic world in which a test makes configured parents answer 404 (docs/contracts.md
part 2, `gone_parents`).

Opt-in (`running_sandbox(world=GoneWorld(seed, scale))`): the default world is not touched. The API cannot
list events, students or deliveries, so a sync finds one deleted only when its own request answers 404.
`answers` maps a parent to the status its requests answer from now on (404 gone, or 403, 503 to play a
parent that is not gone but cannot be read), set and removed by the test between runs; a parent is an
event id (its details and its attendees), `team_slug/student_slug` (its enrollments) or
`team_slug/delivery_id` (its details). Everything else is served as by `SyntheticWorld`, so a parent
removed from `answers` comes back as it was.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from .api import Listing, Record, WorldError
from .world import SyntheticWorld

GoneKind = Literal["event", "student", "delivery"]
ERROR_CODES = {404: "not_found", 403: "forbidden"}


class GoneWorld(SyntheticWorld):
    """`SyntheticWorld(seed, scale)` whose parents in `answers` answer their status."""

    def __init__(self, seed: int = 1, scale: int = 1000):
        super().__init__(seed, scale)
        self.answers: dict[tuple[GoneKind, str], int] = {}

    def _check(self, kind: GoneKind, key: str) -> None:
        status = self.answers.get((kind, key))
        if status is not None:
            raise WorldError(status, ERROR_CODES.get(status, "unavailable"), f"{kind} answers {status}")

    def event(self, event_id: str) -> Record:
        self._check("event", event_id)
        return super().event(event_id)

    def attendees(
        self,
        event_id: str,
        modified_gte: datetime | None = None,
        modified_lte: datetime | None = None,
        status: str | None = None,
        search: str | None = None,
        order: Literal["asc", "desc"] = "asc",
        ticket_id: str | None = None,
    ) -> Listing:
        self._check("event", event_id)
        return super().attendees(event_id, modified_gte, modified_lte, status, search, order, ticket_id)

    def enrollments(self, team_slug: str, student_slug: str) -> Listing:
        self._check("student", f"{team_slug}/{student_slug}")
        return super().enrollments(team_slug, student_slug)

    def delivery(self, team_slug: str, delivery_id: int) -> Record:
        self._check("delivery", f"{team_slug}/{delivery_id}")
        return super().delivery(team_slug, delivery_id)
