"""Real-world iCalendar oddities (tests/data/ics) through `manage.py import_ics`.

Each file holds one readable event beside the odd one, the way one broken
event sits in a year of calendar: the readable events are imported, the odd
one is skipped and named with its UID, summary and reason, and the command
succeeds. Files that are no calendar fail with a message and import nothing.
"""

from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from household.models import CalendarEvent

CORPUS = Path(__file__).parents[1] / "data" / "ics"
VCARD = Path(__file__).parents[1] / "data" / "vcards" / "iphone-photo.vcf"


def run(name: str | Path) -> tuple[str, str]:
    """Import a file with the command; return its stdout and stderr."""
    out, err = StringIO(), StringIO()
    path = name if isinstance(name, Path) else CORPUS / name
    call_command(
        "import_ics", str(path), "--household", "becker", stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


def starts(household, title: str) -> list[datetime]:
    return list(
        CalendarEvent.objects.filter(household=household, title=title)
        .order_by("starts_at")
        .values_list("starts_at", flat=True)
    )


def titles(household) -> list[str]:
    return sorted(
        CalendarEvent.objects.filter(household=household).values_list(
            "title", flat=True
        )
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "skipped"),
    [
        (
            "no-dtstart.ics",
            "event ohne-start@yorik.test (Friseur ohne Start): "
            "it has no start (DTSTART)",
        ),
        (
            "two-dtstart.ics",
            "event zwei-starts@yorik.test (Werkstatt zweimal begonnen): "
            "it has 2 starts (DTSTART)",
        ),
        (
            "untl-typo.ics",
            "event untl-tippfehler@yorik.test (Sprachkurs): "
            "its RRULE has an unknown part UNTL",
        ),
        (
            "rscale.ics",
            "event rscale@yorik.test (Geburtstag (chinesischer Kalender)): "
            "its RRULE uses another calendar system (RSCALE=CHINESE)",
        ),
        (
            "interval-zero.ics",
            "event intervall-null@yorik.test (Gitarrenstunde): "
            "its RRULE repeats every 0 intervals (INTERVAL=0)",
        ),
        (
            "bysetpos-zero.ics",
            "event bysetpos-null@yorik.test (Elternabend): "
            "its recurrence cannot be expanded: ",
        ),
    ],
)
def test_an_unreadable_event_is_skipped_and_named_the_rest_imported(
    household, name, skipped
):
    out, err = run(name)

    assert "1 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert err.startswith(skipped)
    assert "Traceback" not in out + err
    assert titles(household) == ["Zahnarzt Dr. Schmidt"]


@pytest.mark.django_db
def test_outlook_byday_with_spaces_is_read_and_said(household):
    out, err = run("byday-spaces.ics")

    assert "5 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.strip() == (
        "event outlook-serie@yorik.test (Chor (Outlook)): "
        "RRULE 'FREQ=WEEKLY;COUNT=4;BYDAY=MO, TU' read without its spaces"
    )
    assert titles(household).count("Chor (Outlook)") == 4


@pytest.mark.django_db
def test_rdates_mixing_dates_and_times_are_imported(household):
    out, err = run("rdate-mixed.ics")

    assert "0 skipped" in out
    assert err == ""
    starts = [
        event.starts_at
        for event in CalendarEvent.objects.filter(title="Physiotherapie").order_by(
            "starts_at"
        )
    ]
    assert starts == [
        datetime(2025, 3, 3, 16, 0, tzinfo=UTC),
        # The all-day RDATE starts at midnight in Berlin.
        datetime(2025, 3, 9, 23, 0, tzinfo=UTC),
        datetime(2025, 3, 17, 16, 0, tzinfo=UTC),
    ]


@pytest.mark.django_db
def test_a_time_the_clocks_pass_twice_is_unchanged_on_a_rerun(household):
    first, _ = run("dst-ambiguous.ics")
    second, _ = run("dst-ambiguous.ics")

    assert "1 created" in first
    assert "0 created, 0 updated, 1 unchanged, 0 skipped" in second
    # 02:30 on the night clocks go back is read as the first 02:30 (CEST).
    event = CalendarEvent.objects.get(household=household)
    assert event.starts_at == datetime(2025, 10, 26, 0, 30, tzinfo=UTC)


@pytest.mark.django_db
def test_a_line_that_is_not_utf8_is_read_as_windows_1252_and_said(household):
    out, err = run("not-utf8.ics")

    assert "2 created" in out
    assert "not UTF-8 on line 16: read as Windows-1252" in err
    locations = dict(
        CalendarEvent.objects.filter(household=household).values_list(
            "title", "location"
        )
    )
    # The other lines are UTF-8 and stay whole.
    assert locations == {
        "Termin bei Günther Weiß": "Königstraße 5",
        "Besprechung": "Bürgerbüro",
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "message"),
    [
        (CORPUS / "empty.ics", r"empty\.ics: the file is empty"),
        (CORPUS / "utf16.ics", r"utf16\.ics: the file is UTF-16 text"),
        (VCARD, r"iphone-photo\.vcf: not an iCalendar file: it is a vCard file"),
    ],
    ids=["empty", "utf16", "vcard"],
)
def test_a_file_that_is_no_calendar_fails_and_imports_nothing(household, path, message):
    with pytest.raises(CommandError, match=message):
        run(path)
    assert not CalendarEvent.objects.exists()


@pytest.mark.django_db
def test_a_calendar_whose_only_event_is_unreadable_fails(household, tmp_path):
    broken = tmp_path / "only-broken.ics"
    broken.write_bytes(
        (CORPUS / "no-dtstart.ics")
        .read_bytes()
        .replace(b"DTSTART;TZID=Europe/Berlin:20250502T090000\r\n", b"")
    )

    with pytest.raises(CommandError, match="none of its events could be imported"):
        run(broken)
    assert not CalendarEvent.objects.exists()


READABLE = sorted(
    path.name
    for path in CORPUS.glob("*.ics")
    if path.name not in {"empty.ics", "utf16.ics", "bare-vevent.ics"}
)


@pytest.mark.django_db
@pytest.mark.parametrize("name", READABLE)
def test_every_calendar_is_unchanged_when_imported_again(household, name):
    run(name)

    out, _ = run(name)

    assert ": 0 created, 0 updated, " in out
    assert "Traceback" not in out


@pytest.mark.django_db
def test_every_calendar_of_a_file_is_imported(household):
    out, err = run("two-calendars.ics")

    assert "2 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err == ""
    assert titles(household) == ["Elternabend", "Zahnarzt Dr. Schmidt"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "note"),
    [
        (
            "vtodo-bad-dtstart.ics",
            "VTODO muell@yorik.test (Müll rausbringen): skipped, "
            "its DTSTART cannot be read: ",
        ),
        (
            "tzoffset-colon.ics",
            "time zone Europe/Berlin: skipped, its TZOFFSETFROM cannot be read: ",
        ),
        (
            "alarm-bad-trigger.ics",
            "an alarm of event zahnarzt-2025@yorik.test (Zahnarzt Dr. Schmidt): "
            "skipped, its TRIGGER cannot be read: ",
        ),
        ("two-tzid.ics", "time zone Europe/Berlin, Berlin: skipped, it has 2 TZIDs"),
    ],
)
def test_a_bad_value_outside_the_events_skips_its_component_not_the_file(
    household, name, note
):
    out, err = run(name)

    assert "1 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.startswith(note)
    assert "Traceback" not in out + err
    # Europe/Berlin is a zone the system knows, with or without its VTIMEZONE.
    assert starts(household, "Zahnarzt Dr. Schmidt") == [
        datetime(2025, 5, 2, 7, 0, tzinfo=UTC)
    ]


@pytest.mark.django_db
def test_a_truncated_file_imports_its_complete_events_and_says_so(household):
    out, err = run("truncated.ics")

    assert "1 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.strip() == (
        "The file is truncated: it ends inside event friseur-2025@yorik.test "
        "(Friseur), which is not imported; the complete events before it are."
    )
    assert titles(household) == ["Zahnarzt Dr. Schmidt"]


@pytest.mark.django_db
def test_a_file_truncated_before_its_first_event_ends_fails_and_says_so(
    household, tmp_path
):
    cut = tmp_path / "cut.ics"
    text = (CORPUS / "truncated.ics").read_bytes()
    cut.write_bytes(text[: text.index(b"END:VEVENT")])

    with pytest.raises(
        CommandError, match=r"no events \(VEVENT\); the file is truncated"
    ):
        run(cut)
    assert not CalendarEvent.objects.exists()


@pytest.mark.django_db
def test_a_duration_in_weeks_is_read_written_either_way(household):
    out, err = run("duration-weeks.ics")

    assert "3 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.strip() == (
        "event kur-2025@yorik.test (Kur Bad Kissingen): DURATION 'PT1W' read as P1W"
    )
    spans = {
        event.title: event.ends_at - event.starts_at
        for event in CalendarEvent.objects.filter(household=household)
    }
    assert spans["Kur Bad Kissingen"] == timedelta(weeks=1)
    assert spans["Reha"] == timedelta(weeks=2)


@pytest.mark.django_db
def test_a_date_start_with_a_date_time_end_starts_at_that_days_midnight(household):
    out, err = run("date-start-datetime-end.ics")

    assert "2 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.strip() == (
        "event umzug-2025@yorik.test (Umzug): its DTSTART is a date beside a "
        "date-time: read as that day's midnight"
    )
    move = CalendarEvent.objects.get(household=household, title="Umzug")
    assert move.starts_at == datetime(2025, 6, 13, 22, 0, tzinfo=UTC)
    assert move.ends_at == datetime(2025, 6, 14, 16, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_rdates_and_exdates_of_dates_marked_utc_are_read_as_dates(household):
    out, err = run("rdate-utc-date.ics")

    assert "3 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert err.splitlines() == [
        "event logopaedie@yorik.test (Logopädie): "
        "RDATE '20250310Z,20250317Z' read as dates without the Z",
        "event logopaedie@yorik.test (Logopädie): "
        "EXDATE '20250317Z' read as dates without the Z",
    ]
    # 3 March, and the RDATE 10 March; the 17th is an EXDATE too.
    assert starts(household, "Logopädie") == [
        datetime(2025, 3, 2, 23, 0, tzinfo=UTC),
        datetime(2025, 3, 9, 23, 0, tzinfo=UTC),
    ]


@pytest.mark.django_db
def test_rscale_gregorian_is_expanded_and_a_shifting_skip_named(household):
    out, err = run("rscale-gregorian.ics")

    assert "4 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert err.strip() == (
        "event miete@yorik.test (Miete überweisen): its RRULE moves the days a "
        "month lacks (SKIP=BACKWARD, RFC 7529), which cannot be expanded"
    )
    assert starts(household, "Nachhilfe") == [
        datetime(2025, month, 6, 15, 0, tzinfo=UTC) for month in (1, 2, 3)
    ]


@pytest.mark.django_db
def test_moved_occurrences_without_their_series_are_imported_or_skipped_and_named(
    household,
):
    out, err = run("moved-without-series.ics")

    assert "3 created, 0 updated, 0 unchanged, 3 skipped" in out
    assert err.splitlines() == [
        "event yoga@yorik.test (Yoga (verlegt)): a moved occurrence "
        "(RECURRENCE-ID) of a series that is not in the file: imported on its own",
        "event schwimmen@yorik.test (Schwimmkurs (verlegt)): a moved occurrence "
        "(RECURRENCE-ID) of a series that is skipped: imported on its own",
        "event schwimmen@yorik.test (Schwimmkurs): its RRULE has an unknown part UNTL",
        "event chor@yorik.test (Chorprobe): cancelled",
        "event chor@yorik.test (Chorprobe (verlegt)): its series is cancelled",
    ]
    assert titles(household) == [
        "Schwimmkurs (verlegt)",
        "Yoga (verlegt)",
        "Zahnarzt Dr. Schmidt",
    ]
    assert starts(household, "Yoga (verlegt)") == [
        datetime(2025, 3, 12, 17, 0, tzinfo=UTC)
    ]


@pytest.mark.django_db
def test_a_bare_vevent_is_refused_with_a_message_that_says_so(household):
    with pytest.raises(
        CommandError,
        match=r"bare-vevent\.ics: not an iCalendar file: it holds a bare VEVENT "
        "without a VCALENDAR around it, which is not imported; put its lines "
        "between BEGIN:VCALENDAR and END:VCALENDAR; nothing was imported",
    ):
        run("bare-vevent.ics")
    assert not CalendarEvent.objects.exists()
