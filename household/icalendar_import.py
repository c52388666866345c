"""Import the events of an iCalendar (.ics) file into a household's calendar.

Single events are imported as they are, past or future. A recurring event
becomes its past occurrences (RRULE, RDATE, EXDATE and moved occurrences
honoured, expanded by recurring_ical_events), since only what happened is
evidence of the providers a household uses. A moved occurrence whose series
is not in the file, or is skipped, is imported on its own, with a note. Each
event remembers its origin in `source_uid` ("<UID>|<start>"), so importing
the file again updates events instead of duplicating them; times are
compared in UTC, so a time the clocks pass twice (02:30 on the night they go
back) is unchanged on a re-run.

A file may hold several calendars (VCALENDAR); each is imported. One part
that cannot be read never costs the rest:

- A component other than an event holding a value that cannot be read (a
  VTODO's DTSTART, a time zone's TZOFFSETFROM or second TZID, an alarm's
  TRIGGER) is skipped with a note; the events are read without it.
- An event without a DTSTART or with two, with a start or end that cannot be
  read, or a series whose recurrence cannot be expanded (an RRULE with an
  unknown part such as `UNTL=`, RSCALE's non-Gregorian calendars, SKIP's
  shifted days) is skipped and reported with its UID, summary and reason; so
  are cancelled events.
- Common slips are read as meant, with a note: Outlook's spaces in RRULE
  lists (`BYDAY=MO, TU`), a DURATION in weeks written as a time (`PT1W`), a
  date with a UTC mark in RDATE or EXDATE (`20250510Z`), a date start with a
  date-time end (the date is read as its midnight), `RSCALE=GREGORIAN`.
- A file cut off before its END:VCALENDAR (truncated) gives the events it
  completed, with a note.

The file is UTF-8 (RFC 5545); a line that is not is read as Windows-1252 and
reported. An empty file, a UTF-16 file, a vCard, a bare VEVENT without a
VCALENDAR and anything else that is no calendar with events raise
CalendarFileError and import nothing.
"""

import codecs
import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo

import recurring_ical_events
import x_wr_timezone
from django.db import transaction
from django.utils import timezone
from icalendar import Calendar, Component, ComponentFactory
from icalendar.parser.ical import CalendarIcalParser
from icalendar.prop import vBroken, vRecur, vSkip

from household.models import CalendarEvent, Household
from people_search.engine.text import fold_name
from yorik.statistics import analyze_after_commit

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
# Weeks written as a time ("PT1W"); RFC 5545 writes them "P1W".
_WEEKS_AS_TIME = re.compile(r"([+-]?)PT(\d+)W")
# A date with the UTC mark only a date-time may carry ("20250510Z").
_DATE_MARKED_UTC = re.compile(r"(\d{8})Z")


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


class _TolerantParser(CalendarIcalParser):
    """Parse every calendar of a text, reading each component as icalendar reads
    a VEVENT.

    icalendar keeps a VEVENT's unreadable value as a broken property listed in
    the event's `errors` (its `ignore_exceptions`), and fails the whole text
    on one anywhere else: a VTODO's DTSTART, a time zone's TZOFFSETFROM, an
    alarm's TRIGGER. Read the same way, such a component can be skipped
    instead of the file. The components still open where the text ends (it
    was cut off) are in `unclosed`, outermost first; the outermost is parsed
    with what it completed.
    """

    def initialize_parsing(self) -> None:
        super().initialize_parsing()
        self.unclosed: list[Component] = []

    def handle_begin_component(self, vals: str) -> None:
        super().handle_begin_component(vals)
        self.component.ignore_exceptions = True
        self.unclosed.append(self.component)

    def handle_end_component(self, vals: str) -> None:
        closing = self.unclosed.pop() if self.unclosed else None
        try:
            super().handle_end_component(vals)
        # A VTIMEZONE the library cannot make a time zone of fails after it
        # joined its calendar, as the library caches it by its TZID.
        except (AttributeError, TypeError, ValueError) as error:
            if closing is None:
                raise
            tzids = closing.get("TZID")
            closing.errors.append(
                (
                    None,
                    f"it has {len(tzids)} TZIDs"
                    if isinstance(tzids, list)
                    else f"it cannot be read as a time zone: {error}",
                )
            )

    def parse(self) -> list[Component]:
        return [*super().parse(), *self.unclosed[:1]]


def read_events(data: bytes, *, now: datetime, zone: tzinfo) -> CalendarReading:
    """Return the events to import, the events skipped and the file's warnings.

    Floating times and all-day dates are read in `zone`. Raise
    CalendarFileError when the data is no calendar with events.
    """
    text, warnings = _decode(data)
    events: dict[str, ImportedEvent] = {}
    skipped: list[SkippedEvent] = []
    for calendar in _calendars(text, warnings):
        _read_calendar(
            calendar,
            now=now,
            zone=zone,
            events=events,
            skipped=skipped,
            warnings=warnings,
        )
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


def _calendars(text: str, warnings: list[str]) -> list[Component]:
    """Return the text's calendars without their unreadable components.

    Note each component skipped, anything outside a calendar and a text cut
    off before its END:VCALENDAR in `warnings`.
    """
    if text.lstrip()[:11].upper() == "BEGIN:VCARD":
        raise CalendarFileError("not an iCalendar file: it is a vCard file")
    parser = _TolerantParser(text, ComponentFactory(), Calendar.types_factory)
    try:
        components = parser.parse()
    except ValueError as error:
        raise CalendarFileError(f"not an iCalendar file: {error}") from error
    # Whatever else the parser raises on broken structure is a file that
    # cannot be read, not a crash.
    except Exception as error:
        raise CalendarFileError(f"the file cannot be read: {error!r}") from error
    calendars = [c for c in components if c.name == "VCALENDAR"]
    outside = [c for c in components if c.name != "VCALENDAR"]
    if not calendars:
        raise CalendarFileError(_not_a_calendar(outside))
    warnings += [f"{_named(c)}: outside any VCALENDAR, skipped" for c in outside]
    if parser.unclosed:
        warnings.append(_truncation(parser.unclosed))
    for calendar in calendars:
        _skip_unreadable_components(calendar, warnings)
    if not any(calendar.walk("VEVENT") for calendar in calendars):
        problem = "the calendar holds no events (VEVENT)"
        if parser.unclosed:
            problem += "; the file is truncated"
        raise CalendarFileError(problem)
    return [_standard(calendar, warnings) for calendar in calendars]


def _not_a_calendar(components: list[Component]) -> str:
    if not components:
        return "not an iCalendar file: it has no BEGIN:VCALENDAR"
    name = components[0].name
    if name == "VCARD":
        return "not an iCalendar file: it is a vCard file"
    if name in {"VEVENT", "VTODO", "VJOURNAL"}:
        return (
            f"not an iCalendar file: it holds a bare {name} without a VCALENDAR "
            f"around it, which is not imported; put its lines between "
            "BEGIN:VCALENDAR and END:VCALENDAR"
        )
    return f"not an iCalendar file: it is a {name}"


def _truncation(unclosed: list[Component]) -> str:
    """Return the note on a text that ends inside these components."""
    if len(unclosed) == 1:
        return (
            "The file is truncated: it ends before END:VCALENDAR; "
            "its complete events are imported."
        )
    return (
        f"The file is truncated: it ends inside {_named(unclosed[1])}, which is "
        "not imported; the complete events before it are."
    )


def _skip_unreadable_components(parent: Component, warnings: list[str]) -> None:
    """Drop the parent's subcomponents that hold a value that cannot be read.

    A VEVENT stays: its own values are judged with the event (_unreadable),
    and only its unreadable subcomponents (an alarm) go. Each component
    dropped is noted in `warnings`.
    """
    kept = []
    for child in parent.subcomponents:
        problem = "" if child.name == "VEVENT" else _first_problem(child)
        if problem:
            warnings.append(f"{_named(child, parent)}: skipped, {problem}")
            continue
        if child.name == "VEVENT":
            _skip_unreadable_components(child, warnings)
        kept.append(child)
    parent.subcomponents = kept


def _first_problem(component: Component) -> str:
    """Return the first value of the component or its subcomponents that
    cannot be read, described, or "" when there is none."""
    for name, error in component.errors:
        return f"its {name} cannot be read: {error}" if name else error
    for child in component.subcomponents:
        problem = _first_problem(child)
        if problem:
            return problem
    return ""


def _named(component: Component, parent: Component | None = None) -> str:
    """Return how a note names a component: its kind, UID and summary."""
    if component.name == "VTIMEZONE":
        tzids = component.get("TZID", [])
        written = tzids if isinstance(tzids, list) else [tzids]
        return f"time zone {', '.join(map(str, written)) or '(no TZID)'}"
    if component.name == "VALARM" and parent is not None:
        return f"an alarm of {_named(parent)}"
    kind = "event" if component.name == "VEVENT" else component.name
    return f"{kind} {_uid(component) or '(no UID)'} ({_summary(component)})"


def _standard(calendar: Component, warnings: list[str]) -> Component:
    """Return the calendar with its X-WR-TIMEZONE applied to its UTC times."""
    try:
        return x_wr_timezone.to_standard(calendar)
    # zoneinfo raises ValueError for a malformed name, KeyError for an unknown one.
    except (ValueError, KeyError):
        warnings.append(
            f"X-WR-TIMEZONE {str(calendar.get('X-WR-TIMEZONE'))!r} is no known "
            "time zone: skipped, its calendar's UTC times are read as UTC."
        )
        return calendar


def _read_calendar(
    calendar: Component,
    *,
    now: datetime,
    zone: tzinfo,
    events: dict[str, ImportedEvent],
    skipped: list[SkippedEvent],
    warnings: list[str],
) -> None:
    """Add a calendar's events to `events` by source UID; note the skipped ones."""
    readable: list[Component] = []
    unreadable_masters: set[str] = set()
    for event in calendar.walk("VEVENT"):
        reason = _unreadable(event, warnings)
        if not reason:
            readable.append(event)
            continue
        skipped.append(_skipped(event, reason))
        if "RECURRENCE-ID" not in event:
            unreadable_masters.add(_uid(event))
    masters = {_uid(event) for event in readable if "RECURRENCE-ID" not in event}
    series_uids = {
        _uid(event)
        for event in readable
        if "RECURRENCE-ID" not in event
        and any(name in event for name in _SERIES_PROPERTIES)
    }
    series: dict[str, list[Component]] = defaultdict(list)
    singles: list[Component] = []
    for event in readable:
        uid = _uid(event)
        if "RECURRENCE-ID" in event and uid not in masters:
            where = "is skipped" if uid in unreadable_masters else "is not in the file"
            warnings.append(
                _noted(
                    event,
                    f"a moved occurrence (RECURRENCE-ID) of a series that {where}: "
                    "imported on its own",
                )
            )
            singles.append(event)
        elif uid in series_uids:
            series[uid].append(event)
        else:
            singles.append(event)
    for component in singles:
        if _cancelled(component):
            skipped.append(_skipped(component, "cancelled"))
        else:
            event = _imported_event(component, zone)
            events[event.source_uid] = event
    timezones = calendar.walk("VTIMEZONE")
    for components in series.values():
        [master, *_] = [c for c in components if "RECURRENCE-ID" not in c]
        moved = [c for c in components if "RECURRENCE-ID" in c]
        if _cancelled(master):
            skipped.append(_skipped(master, "cancelled"))
            skipped += [_skipped(c, "its series is cancelled") for c in moved]
            continue
        try:
            occurrences = _occurrences(timezones, components, now=now)
        # Whatever a broken series raises inside the expansion costs only it.
        except Exception as error:
            skipped.append(
                _skipped(master, f"its recurrence cannot be expanded: {error}")
            )
            for component in moved:
                warnings.append(
                    _noted(
                        component,
                        "a moved occurrence (RECURRENCE-ID) of a series that is "
                        "skipped: imported on its own",
                    )
                )
                if not _cancelled(component):
                    event = _imported_event(component, zone)
                    events[event.source_uid] = event
            continue
        for component in occurrences:
            if not _cancelled(component):
                event = _imported_event(component, zone)
                if event.starts_at < now:
                    events[event.source_uid] = event


def _uid(component: Component) -> str:
    return str(component.get("UID", "")).strip()


def _summary(component: Component) -> str:
    return " ".join(str(component.get("SUMMARY", "")).split())[:80] or UNTITLED


def _cancelled(component: Component) -> bool:
    return str(component.get("STATUS", "")).upper() == "CANCELLED"


def _skipped(component: Component, reason: str) -> SkippedEvent:
    return SkippedEvent(uid=_uid(component), summary=_summary(component), reason=reason)


def _noted(component: Component, note: str) -> str:
    """Return a note on an event that is imported: its UID, summary and the note."""
    return str(_skipped(component, note))


def _unreadable(component: Component, warnings: list[str]) -> str:
    """Return why a VEVENT cannot be imported, or "" when it can.

    Read the slips the module names as meant, with a note in `warnings`.
    """
    starts = component.get("DTSTART")
    if starts is None:
        return "it has no start (DTSTART)"
    if isinstance(starts, list):
        return f"it has {len(starts)} starts (DTSTART)"
    errors = dict(component.errors)
    if "DURATION" in errors:
        _read_weeks_written_as_time(component, warnings)
    _align_date_and_date_time(component, warnings)
    try:
        component.start  # noqa: B018 - reading it is the check
        component.end  # noqa: B018
    except (ValueError, TypeError, AttributeError) as error:
        return f"its start or end cannot be read: {error}"
    if "RRULE" in errors:
        written = str(component["RRULE"])
        try:
            repaired = vRecur.from_ical(written.replace(" ", ""))
        except ValueError:
            return f"its RRULE cannot be read: {written!r}"
        component.pop("RRULE")
        component.add("RRULE", repaired)
        warnings.append(_noted(component, f"RRULE {written!r} read without its spaces"))
    for name in ("RDATE", "EXDATE"):
        if name in errors and not _read_dates_marked_utc(component, name, warnings):
            return f"its {name} cannot be read: {errors[name]}"
    if "RECURRENCE-ID" in errors:
        return f"its RECURRENCE-ID cannot be read: {errors['RECURRENCE-ID']}"
    rules = component.get("RRULE")
    for rule in rules if isinstance(rules, list) else [rules] if rules else []:
        reason = _unexpandable(rule)
        if reason:
            return reason
    return ""


def _unexpandable(rule: vRecur) -> str:
    """Return why an RRULE cannot be expanded, or "" when it can.

    Drop `RSCALE=GREGORIAN` (and `SKIP=OMIT`): they name RFC 5545's own rule.
    """
    if "RSCALE" in rule:
        scale = ",".join(str(value) for value in rule["RSCALE"])
        if scale.upper() != "GREGORIAN":
            return f"its RRULE uses another calendar system (RSCALE={scale})"
        shifts = [skip.value for skip in rule.get("SKIP", []) if skip != vSkip.OMIT]
        if shifts:
            return (
                f"its RRULE moves the days a month lacks (SKIP={','.join(shifts)}, "
                "RFC 7529), which cannot be expanded"
            )
        rule.pop("RSCALE")
        rule.pop("SKIP", None)
    unknown = sorted(set(rule) - _RRULE_PARTS)
    if unknown:
        return f"its RRULE has an unknown part {', '.join(unknown)}"
    # dateutil would never stop stepping by nothing.
    if any(int(value) < 1 for value in rule.get("INTERVAL", [])):
        return "its RRULE repeats every 0 intervals (INTERVAL=0)"
    return ""


def _read_weeks_written_as_time(component: Component, warnings: list[str]) -> None:
    """Read a DURATION of weeks written as a time (`PT1W`) as the weeks."""
    written = str(component["DURATION"]).strip()
    match = _WEEKS_AS_TIME.fullmatch(written)
    if match is None:
        return
    sign, weeks = match.groups()
    component.pop("DURATION")
    component.add("DURATION", timedelta(weeks=int(weeks)) * (-1 if sign else 1))
    warnings.append(_noted(component, f"DURATION {written!r} read as {sign}P{weeks}W"))


def _align_date_and_date_time(component: Component, warnings: list[str]) -> None:
    """Read a date start with a date-time end, or the reverse, as the date's midnight.

    The midnight is in the date-time's zone; a floating one is read in the
    household's, as a date is.
    """
    start, end = component.get("DTSTART"), component.get("DTEND")
    if end is None or isinstance(end, list) or vBroken in (type(start), type(end)):
        return
    start_time, end_time = start.dt, end.dt
    if isinstance(start_time, datetime) == isinstance(end_time, datetime):
        return
    if isinstance(start_time, datetime):
        name, day, zone = "DTEND", end_time, start_time.tzinfo
    else:
        name, day, zone = "DTSTART", start_time, end_time.tzinfo
    component.pop(name)
    component.add(name, datetime.combine(day, time.min, tzinfo=zone))
    warnings.append(
        _noted(
            component,
            f"its {name} is a date beside a date-time: read as that day's midnight",
        )
    )


def _read_dates_marked_utc(
    component: Component, name: str, warnings: list[str]
) -> bool:
    """Read an RDATE or EXDATE whose dates carry a UTC mark (`20250510Z`) as dates.

    Return False, changing nothing, when the property cannot be read so.
    """
    values = component[name] if isinstance(component[name], list) else [component[name]]
    read, notes = [], []
    for value in values:
        if not isinstance(value, vBroken):
            read.append(value)
            continue
        parts = str(value).split(",")
        if not all(_DATE_MARKED_UTC.fullmatch(part.strip()) for part in parts):
            return False
        try:
            read.append([date.fromisoformat(part.strip()[:8]) for part in parts])
        except ValueError:
            return False
        notes.append(
            _noted(component, f"{name} {str(value)!r} read as dates without the Z")
        )
    component.pop(name)
    for value in read:
        component.add(name, value)
    warnings += notes
    return True


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
    analyze_after_commit([CalendarEvent], household_id=household.pk)
    return len(new), len(changed), len(stored) - len(changed)
