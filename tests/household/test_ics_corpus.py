"""Real-world iCalendar oddities (tests/data/ics) through `manage.py import_ics`.

Each file holds one readable event beside the odd one, the way one broken
event sits in a year of calendar: the readable events are imported, the odd
one is skipped and named with its UID, summary and reason, and the command
succeeds. Files that are no calendar fail with a message and import nothing.
"""

from datetime import UTC, datetime
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
    if path.name not in {"empty.ics", "utf16.ics"}
)


@pytest.mark.django_db
@pytest.mark.parametrize("name", READABLE)
def test_every_calendar_is_unchanged_when_imported_again(household, name):
    run(name)

    out, _ = run(name)

    assert ": 0 created, 0 updated, " in out
    assert "Traceback" not in out


@pytest.mark.django_db
def test_a_calendar_the_parser_fails_on_is_a_message_not_a_traceback(
    household, tmp_path
):
    broken = tmp_path / "two-tzid.ics"
    broken.write_bytes(
        (CORPUS / "no-dtstart.ics")
        .read_bytes()
        .replace(b"TZID:Europe/Berlin\r\n", b"TZID:Europe/Berlin\r\nTZID:Berlin\r\n")
    )

    with pytest.raises(CommandError, match=r"two-tzid\.ics: the file cannot be read"):
        run(broken)
    assert not CalendarEvent.objects.exists()
