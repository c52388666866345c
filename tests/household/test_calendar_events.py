"""Writes of single calendar events: the folded title find_known_provider reads."""

from datetime import UTC, datetime

import pytest

from household.models import CalendarEvent, EventAttendee
from household.services import create_calendar_event

STARTS_AT = datetime(2025, 5, 2, 7, tzinfo=UTC)


@pytest.mark.django_db
def test_a_created_event_keeps_its_title_folded_and_its_attendees(
    household, admin_membership
):
    create_calendar_event(
        household=household,
        title="Kontrolle beim ZAHNÄRZT",
        starts_at=STARTS_AT,
        location="Zahnarztpraxis Dr. Schmidt, Boxhagener Straße 52, 10245 Berlin",
        attendees=[admin_membership.profile],
    )

    event = CalendarEvent.objects.get()
    assert event.folded_title == "kontrolle beim zahnarzt"
    assert list(
        EventAttendee.objects.filter(calendarevent=event).values_list(
            "userprofile_id", flat=True
        )
    ) == [admin_membership.profile_id]
