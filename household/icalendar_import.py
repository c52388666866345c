"""Import the events of an iCalendar (.ics) file into a household's calendar.

Single events are imported as they are, past or future. A recurring event
becomes its past occurrences (RRULE, RDATE, EXDATE and moved occurrences
honoured, expanded by recurring_ical_events), since only what happened is
evidence of the providers a household uses. Each event remembers its origin
in `source_uid` ("<UID>|<start>"), so importing the file again updates events
instead of duplicating them; times are compared in UTC, so a time the clocks
pass twice (02:30 on the night they go back) is unchanged on a re-run.

One event that cannot be read never costs the others: an event without a
DTSTART or with two, with a start or end that cannot be read, or a series
whose recurrence cannot be expanded (an RRULE with an unknown part such as
`UNTL=`, RSCALE's non-Gregorian calendars, an RDATE list mixing dates and
times that cannot be expanded) is skipped and reported with its UID,
summary and reason; so are cancelled events. An Outlook RRULE with spaces
in its lists (`BYDAY=MO, TU`) is read without them. The file is UTF-8 (RFC
5545); a line that is not is read as Windows-1252 and reported. An empty
file, a UTF-16 file, a vCard and anything else that is no calendar with
events raise CalendarFileError and import nothing.
"""

import codecs
import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, tzinfo

import recurring_ical_events
import x_wr_timezone
from django.db import transaction
from django.utils import timezone
from icalendar import Calendar, Component
from icalendar.prop import vRecur

from household.models import CalendarEvent, Household
from people_search.engine.text import fold_name

# Recurring events are expanded from here on; nothing a household keeps is older.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
UNTITLED = "(no title)"
# Lines that are not UTF-8 are read in this code page, as old Windows wrote them.
FALLBACK_ENCODING = "cp1252"
# bulk_update sets each column by a CASE over its batch's rows, which the
# database evaluates per row: one batch of every changed row is quadratic.
UPDATE_BATCH = 500
_SERIES_PROPERTIES = ("RRULE", "RDATE")
# The parts of an RRULE that RFC 5545 and RFC 7529 name.
_RRULE_PARTS = frozenset(vRecur.canonical_order)
_UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Lines named in a warning before "and N more".
_LISTED_LINES = 5


class CalendarFileError(ValueError):
    """The file is not an iCalendar file with events."""


@dataclass(frozen=True)
class ImportedEvent:
    source_uid: str
    title: str
    starts_at: datetime
    ends_at: datetime | None
    location: str


@dataclass(frozen=True)
class SkippedEvent:
    """An event of the file that was not imported, and why."""

    uid: str
    summary: str
    reason: str

    def __str__(self) -> str:
        return f"event {self.uid or '(no UID)'} ({self.summary}): {self.reason}"


@dataclass(frozen=True)
class CalendarReading:
    """What a file holds: the events to import, the skipped ones, warnings."""

    events: list[ImportedEvent]
    skipped: list[SkippedEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportCounts:
    created: int
    updated: int
    unchanged: int
    skipped: int
    # One line per skipped event (UID, summary, reason); notes on the file.
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def imported(self) -> int:
        """Return how many events the file gave the calendar, changed or not."""
        return self.created + self.updated + self.unchanged

    def __str__(self) -> str:
        return (
            f"{self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged, {self.skipped} skipped"
        )


def read_events(data: bytes, *, now: datetime, zone: tzinfo) -> CalendarReading:
    """Return the events to import, the events skipped and the file's warnings.

    Floating times and all-day dates are read in `zone`. Raise
    CalendarFileError when the data is no calendar with events.
    """
    text, warnings = _decode(data)
    calendar = _parse(text)
    vevents = calendar.walk("VEVENT")
    if not vevents:
        raise CalendarFileError("the calendar holds no events (VEVENT)")
    skipped: list[SkippedEvent] = []
    series: dict[str, list[Component]] = defaultdict(list)
    singles: list[Component] = []
    series_uids = {
        _uid(event) for event in vevents if any(n in event for n in _SERIES_PROPERTIES)
    }
    for event in vevents:
        reason = _unreadable(event, warnings)
        if reason:
            skipped.append(_skipped(event, reason))
        elif _uid(event) in series_uids:
            series[_uid(event)].append(event)
        else:
            singles.append(event)
    events: dict[str, ImportedEvent] = {}
    for component in singles:
        if _cancelled(component):
            skipped.append(_skipped(component, "cancelled"))
        else:
            event = _imported_event(component, zone)
            events[event.source_uid] = event
    timezones = calendar.walk("VTIMEZONE")
    for components in series.values():
        masters = [c for c in components if "RECURRENCE-ID" not in c]
        if not masters:
            # Moved occurrences whose series was skipped above.
            continue
        if _cancelled(masters[0]):
            skipped.append(_skipped(masters[0], "cancelled"))
            continue
        try:
            occurrences = _occurrences(timezones, components, now=now)
        # Whatever a broken series raises inside the expansion costs only it.
        except Exception as error:
            skipped.append(
                _skipped(masters[0], f"its recurrence cannot be expanded: {error}")
            )
            continue
        for component in occurrences:
            if not _cancelled(component):
                event = _imported_event(component, zone)
                if event.starts_at < now:
                    events[event.source_uid] = event
    return CalendarReading(list(events.values()), skipped, warnings)


def _decode(data: bytes) -> tuple[str, list[str]]:
    """Return the file's text, reading lines that are not UTF-8 as Windows-1252."""
    if not data.strip():
        raise CalendarFileError("the file is empty")
    if data.startswith(_UTF16_MARKS):
        raise CalendarFileError(
            "the file is UTF-16 text; iCalendar files are UTF-8 (RFC 5545): "
            "save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8) and import it again"
        )
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    lines: list[str] = []
    guessed: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            guessed.append(number)
            lines.append(line.decode(FALLBACK_ENCODING, errors="replace"))
    listed = ", ".join(str(number) for number in guessed[:_LISTED_LINES])
    if len(guessed) > _LISTED_LINES:
        listed += f" and {len(guessed) - _LISTED_LINES} more"
    noun = "line" if len(guessed) == 1 else "lines"
    return "\n".join(lines), [
        f"The file is not UTF-8 on {noun} {listed}: read as Windows-1252; "
        "check their accented letters."
    ]


def _parse(text: str) -> Calendar:
    if text.lstrip()[:11].upper() == "BEGIN:VCARD":
        raise CalendarFileError("not an iCalendar file: it is a vCard file")
    try:
        calendar = Calendar.from_ical(text)
    except ValueError as error:
        raise CalendarFileError(f"not an iCalendar file: {error}") from error
    # The parser fails in other ways on broken structure (a VTIMEZONE with
    # two TZID lines); that is a file that cannot be read, not a crash.
    except Exception as error:
        raise CalendarFileError(f"the file cannot be read: {error!r}") from error
    if calendar.name != "VCALENDAR":
        what = "a vCard file" if calendar.name == "VCARD" else f"a {calendar.name}"
        raise CalendarFileError(f"not an iCalendar file: it is {what}")
    try:
        return x_wr_timezone.to_standard(calendar)
    except ValueError as error:
        raise CalendarFileError(f"not an iCalendar file: {error}") from error


def _uid(component: Component) -> str:
    return str(component.get("UID", "")).strip()


def _cancelled(component: Component) -> bool:
    return str(component.get("STATUS", "")).upper() == "CANCELLED"


def _skipped(component: Component, reason: str) -> SkippedEvent:
    summary = " ".join(str(component.get("SUMMARY", "")).split())[:80]
    return SkippedEvent(uid=_uid(component), summary=summary or UNTITLED, reason=reason)


def _unreadable(component: Component, warnings: list[str]) -> str:
    """Return why a VEVENT cannot be imported, or "" when it can.

    Repair an RRULE whose only fault is spaces in its lists, with a warning.
    """
    starts = component.get("DTSTART")
    if starts is None:
        return "it has no start (DTSTART)"
    if isinstance(starts, list):
        return f"it has {len(starts)} starts (DTSTART)"
    try:
        component.start  # noqa: B018 - reading it is the check
        component.end  # noqa: B018
    except (ValueError, TypeError, AttributeError) as error:
        return f"its start or end cannot be read: {error}"
    errors = dict(component.errors)
    if "RRULE" in errors:
        written = str(component["RRULE"])
        try:
            repaired = vRecur.from_ical(written.replace(" ", ""))
        except ValueError:
            return f"its RRULE cannot be read: {written!r}"
        component.pop("RRULE")
        component.add("RRULE", repaired)
        warnings.append(
            str(_skipped(component, f"RRULE {written!r} read without its spaces"))
        )
    for name in ("RDATE", "EXDATE", "RECURRENCE-ID"):
        if name in errors:
            return f"its {name} cannot be read: {errors[name]}"
    rules = component.get("RRULE")
    for rule in rules if isinstance(rules, list) else [rules] if rules else []:
        if "RSCALE" in rule:
            scale = ",".join(str(value) for value in rule["RSCALE"])
            return f"its RRULE uses another calendar system (RSCALE={scale})"
        unknown = sorted(set(rule) - _RRULE_PARTS)
        if unknown:
            return f"its RRULE has an unknown part {', '.join(unknown)}"
        # dateutil would never stop stepping by nothing.
        if any(int(value) < 1 for value in rule.get("INTERVAL", [])):
            return "its RRULE repeats every 0 intervals (INTERVAL=0)"
    return ""


def _occurrences(
    timezones: list[Component], components: list[Component], *, now: datetime
) -> list[Component]:
    """Return one series' occurrences from 1970 until now, moved ones moved."""
    calendar = Calendar()
    for component in [*timezones, *components]:
        calendar.add_component(component)
    return list(recurring_ical_events.of(calendar).between(EARLIEST, now))


def _imported_event(component: Component, zone: tzinfo) -> ImportedEvent:
    """Return the event a readable VEVENT describes, its times in UTC."""
    start, end = component.start, component.end
    starts_at = _utc(start, zone)
    ends_at = _utc(end, zone) if end is not None else None
    return ImportedEvent(
        source_uid=_source_uid(component, start),
        title=str(component.get("SUMMARY", "")).strip()[:300] or UNTITLED,
        starts_at=starts_at,
        ends_at=ends_at if ends_at and ends_at >= starts_at else None,
        location=" ".join(str(component.get("LOCATION", "")).split())[:300],
    )


def _utc(value: date | datetime, zone: tzinfo) -> datetime:
    """Return the time in UTC: a date is the start of its day in the zone.

    A time the clocks pass twice compares unequal to every time in another
    zone (PEP 495), the database's UTC included; in UTC it is one instant.
    """
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.min)
    if value.tzinfo is None:
        value = value.replace(tzinfo=zone)
    return value.astimezone(UTC)


def _source_uid(component: Component, start: date | datetime) -> str:
    """Return "<UID>|<start>", hashing what does not fit the column.

    An occurrence is known by the start its series gave it (RECURRENCE-ID), so
    moving it updates the imported event instead of adding one.
    """
    if "RECURRENCE-ID" in component:
        start = component.decoded("RECURRENCE-ID")
    uid = _uid(component)
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
    """Import an iCalendar file's readable events into the household.

    Raise CalendarFileError, writing nothing, when the data is no calendar
    with events.
    """
    reading = read_events(
        data, now=now or timezone.now(), zone=timezone.get_default_timezone()
    )
    created, updated, unchanged = _write_events(household, reading.events)
    return ImportCounts(
        created=created,
        updated=updated,
        unchanged=unchanged,
        skipped=len(reading.skipped),
        problems=tuple(str(event) for event in reading.skipped),
        warnings=tuple(reading.warnings),
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
