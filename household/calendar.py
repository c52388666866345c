"""Writes of single calendar events, each keeping its title folded.

find_known_provider searches the folded title, so every write that sets a
title sets it too; an iCalendar import does the same in bulk.
"""

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction

from household.models import CalendarEvent, Household, UserProfile
from people_search.engine.text import fold_name


@transaction.atomic
def create_calendar_event(
    *,
    household: Household,
    title: str,
    starts_at: datetime,
    ends_at: datetime | None = None,
    location: str = "",
    attendees: Iterable[UserProfile] = (),
) -> CalendarEvent:
    """Create an event of the household with its folded title and attendees."""
    event = CalendarEvent.objects.create(
        household=household,
        title=title,
        folded_title=fold_name(title),
        starts_at=starts_at,
        ends_at=ends_at,
        location=location,
    )
    event.attendees.set(attendees)
    return event


def fold_event_titles(*, event_ids: Iterable[int]) -> None:
    """Store the folded title of events whose title was saved without it."""
    events = list(CalendarEvent.objects.filter(pk__in=list(event_ids)).only("title"))
    for event in events:
        event.folded_title = fold_name(event.title)
    CalendarEvent.objects.bulk_update(events, ["folded_title"])
