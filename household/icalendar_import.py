"""Import the events of an iCalendar (.ics) file into a household's calendar.

Single events are imported as they are, past or future. A recurring event
becomes its past occurrences (RRULE, RDATE, EXDATE and moved occurrences
honoured, expanded by recurring_ical_events), since only what happened is
evidence of the providers a household uses. Each event remembers its origin
in `source_uid` ("<UID>|<start>"), so importing the file again updates events
instead of duplicating them.
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, tzinfo

import recurring_ical_events
import x_wr_timezone
from django.db import transaction
from django.utils import timezone
from icalendar import Calendar, Component

from household.models import CalendarEvent, Household
from people_search.engine.text import fold_name

# Recurring events are expanded from here on; nothing a household keeps is older.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
UNTITLED = "(no title)"
# bulk_update sets each column by a CASE over its batch's rows, which the
# database evaluates per row: one batch of every changed row is quadratic.
UPDATE_BATCH = 500
_SERIES_PROPERTIES = ("RRULE", "RDATE")


class CalendarFileError(ValueError):
    """The file is not an iCalendar file."""


@dataclass(frozen=True)
class ImportedEvent:
    source_uid: str
    title: str
    starts_at: datetime
    ends_at: datetime | None
    location: str


@dataclass(frozen=True)
class ImportCounts:
    created: int
    updated: int
    unchanged: int
    skipped: int

    def __str__(self) -> str:
        return (
            f"{self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged, {self.skipped} skipped"
        )


def read_events(
    data: bytes, *, now: datetime, zone: tzinfo
) -> tuple[list[ImportedEvent], int]:
    """Return the events to import and how many were skipped (cancelled, no start).

    Floating times and all-day dates are read in `zone`.
    """
    try:
        calendar = x_wr_timezone.to_standard(Calendar.from_ical(data))
    except ValueError as error:
        raise CalendarFileError(f"not an iCalendar file: {error}") from error
    vevents = calendar.walk("VEVENT")
    series = {
        str(event.get("UID", ""))
        for event in vevents
        if any(name in event for name in _SERIES_PROPERTIES)
    }
    singles = [
        event
        for event in vevents
        if not any(name in event for name in _SERIES_PROPERTIES)
        and not ("RECURRENCE-ID" in event and str(event.get("UID", "")) in series)
    ]
    occurrences = [
        event
        for event in recurring_ical_events.of(calendar, skip_bad_series=True).between(
            EARLIEST, now
        )
        if str(event.get("UID", "")) in series
    ]
    events: dict[str, ImportedEvent] = {}
    skipped = 0
    for component in singles:
        event = _imported_event(component, zone)
        if event is None:
            skipped += 1
        else:
            events[event.source_uid] = event
    for component in occurrences:
        event = _imported_event(component, zone)
        if event is not None and event.starts_at < now:
            events[event.source_uid] = event
    return list(events.values()), skipped


def _imported_event(component: Component, zone: tzinfo) -> ImportedEvent | None:
    """Return the event a VEVENT describes; None when cancelled or without times."""
    if "DTSTART" not in component or str(component.get("STATUS", "")) == "CANCELLED":
        return None
    try:
        start, end = component.start, component.end
        source_uid = _source_uid(component, start)
    except ValueError:  # icalendar's InvalidCalendar: a time that cannot be read
        return None
    starts_at = _aware(start, zone)
    ends_at = _aware(end, zone) if end is not None else None
    return ImportedEvent(
        source_uid=source_uid,
        title=str(component.get("SUMMARY", "")).strip()[:300] or UNTITLED,
        starts_at=starts_at,
        ends_at=ends_at if ends_at and ends_at >= starts_at else None,
        location=" ".join(str(component.get("LOCATION", "")).split())[:300],
    )


def _aware(value: date | datetime, zone: tzinfo) -> datetime:
    """Return an aware datetime: a date is the start of its day in the zone."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=zone)
    return datetime.combine(value, time.min, tzinfo=zone)


def _source_uid(component: Component, start: date | datetime) -> str:
    """Return "<UID>|<start>", hashing what does not fit the column.

    An occurrence is known by the start its series gave it (RECURRENCE-ID), so
    moving it updates the imported event instead of adding one.
    """
    if "RECURRENCE-ID" in component:
        start = component.decoded("RECURRENCE-ID")
    uid = str(component.get("UID", "")).strip()
    if not uid:
        # RFC 5545 requires a UID; without one the event's own words stand in.
        words = "|".join(
            str(component.get(name, "")) for name in ("SUMMARY", "DTSTART", "LOCATION")
        )
        uid = "sha256:" + hashlib.sha256(words.encode()).hexdigest()
    source_uid = f"{uid}|{start.isoformat()}"
    if len(source_uid) > CalendarEvent._meta.get_field("source_uid").max_length:
        uid = "sha256:" + hashlib.sha256(uid.encode()).hexdigest()
        source_uid = f"{uid}|{start.isoformat()}"
    return source_uid


def import_ics(
    *, household: Household, data: bytes, now: datetime | None = None
) -> ImportCounts:
    """Import an iCalendar file's events into the household, all or nothing.

    Raise CalendarFileError when the data is not iCalendar.
    """
    events, skipped = read_events(
        data, now=now or timezone.now(), zone=timezone.get_default_timezone()
    )
    created, updated, unchanged = _write_events(household, events)
    return ImportCounts(
        created=created, updated=updated, unchanged=unchanged, skipped=skipped
    )


@transaction.atomic
def _write_events(
    household: Household, events: Iterable[ImportedEvent]
) -> tuple[int, int, int]:
    events = list(events)
    stored = {
        row.source_uid: row
        for row in CalendarEvent.objects.select_for_update().filter(
            household=household, source_uid__in=[event.source_uid for event in events]
        )
    }
    new, changed = [], []
    fields = ["title", "starts_at", "ends_at", "location"]
    for event in events:
        row = stored.get(event.source_uid)
        values = {name: getattr(event, name) for name in fields}
        values["folded_title"] = fold_name(event.title)
        if row is None:
            new.append(
                CalendarEvent(
                    household=household, source_uid=event.source_uid, **values
                )
            )
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            changed.append(row)
    CalendarEvent.objects.bulk_create(new)
    CalendarEvent.objects.bulk_update(
        changed, [*fields, "folded_title"], batch_size=UPDATE_BATCH
    )
    return len(new), len(changed), len(stored) - len(changed)
