"""School: a student's enrollments and a school's deliveries (spec parts 2.14, 2.15)."""

from __future__ import annotations

from .common import ApiModel
from .enums import DeliveryPlatform


class EnrollmentCourse(ApiModel):
    name: str


class Enrollment(ApiModel):
    createdAt: str  # the spec types it as a string: kept as the API sends it
    certificateUrl: str | None = None
    progress: float  # percent
    course: EnrollmentCourse


class Delivery(ApiModel):
    id: int
    name: str
    platform: DeliveryPlatform
    platformProductId: str
    platformOfferId: str | None = None
    isActive: bool
    isSubscription: bool
    autoRemoveAccess: bool
    tags: list[str]
    endsAfter: int  # access time in days
