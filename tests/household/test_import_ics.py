"""Importing iCalendar files: time zones, recurring events, idempotent re-runs."""

from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from household.icalendar_import import CalendarFileError, import_ics
from household.models import CalendarEvent

CALENDAR = Path(__file__).parent / "data" / "becker.ics"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def events_titled(household, title):
    return list(
        CalendarEvent.objects.filter(household=household, title=title).order_by(
            "starts_at"
        )
    )


@pytest.mark.django_db
def test_a_recurring_event_becomes_its_past_occurrences(household):
    """Weekly series with an EXDATE and a moved occurrence, expanded up to now."""
    import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)

    lessons = CalendarEvent.objects.filter(
        household=household, title__startswith="Klavierunterricht"
    ).order_by("starts_at")
    assert [event.starts_at.isoformat() for event in lessons] == [
        "2024-03-01T15:00:00+00:00",
        "2024-03-08T15:00:00+00:00",
        # 15 March is an EXDATE; the 22nd was moved to Saturday morning.
        "2024-03-23T09:00:00+00:00",
        "2024-03-29T15:00:00+00:00",
        # Summer time began on 31 March: 16:00 in Berlin is now 14:00 UTC.
        "2024-04-05T14:00:00+00:00",
    ]
    assert lessons[2].title == "Klavierunterricht Lena (verschoben)"
    assert lessons[0].ends_at.isoformat() == "2024-03-01T15:45:00+00:00"
    assert lessons[0].location == "Musikschule Klangwerk, Pappelallee 12, 10437 Berlin"
    assert lessons[0].source_uid == (
        "klavier-lena@becker.example|2024-03-01T16:00:00+01:00"
    )


@pytest.mark.django_db
def test_an_open_series_stops_at_now(household):
    import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)

    training = events_titled(household, "Fußballtraining Paul")

    assert [event.starts_at.date().isoformat() for event in training] == [
        "2026-11-03",
        "2026-11-10",
        "2026-11-17",
        "2026-11-24",
    ]


@pytest.mark.django_db
def test_occurrences_after_now_are_left_out(household):
    import_ics(
        household=household,
        data=CALENDAR.read_bytes(),
        now=datetime(2024, 3, 20, tzinfo=UTC),
    )

    lessons = CalendarEvent.objects.filter(
        household=household, title__startswith="Klavierunterricht"
    )
    assert lessons.count() == 2
    assert not events_titled(household, "Fußballtraining Paul")


@pytest.mark.django_db
def test_single_events_keep_their_time_zone(household):
    """UTC stays UTC, floating times and all-day dates are read in Berlin time."""
    import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)

    [haircut] = events_titled(household, "Friseur")
    [dentist] = events_titled(household, "Zahnarzt")
    [bulky_waste] = events_titled(household, "Sperrmüll abholen")
    [checkup] = events_titled(household, "Hausarzt Check-up")

    assert haircut.starts_at.isoformat() == "2024-12-03T14:30:00+00:00"
    assert dentist.starts_at.isoformat() == "2025-05-02T07:00:00+00:00"
    assert bulky_waste.starts_at.isoformat() == "2024-06-11T22:00:00+00:00"
    assert bulky_waste.ends_at.isoformat() == "2024-06-12T22:00:00+00:00"
    assert bulky_waste.location == ""
    # DURATION instead of DTEND.
    assert checkup.ends_at - checkup.starts_at == timedelta(minutes=30)


@pytest.mark.django_db
def test_future_single_events_are_imported_and_cancelled_ones_skipped(household):
    counts = import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)

    assert [
        e.starts_at.year for e in events_titled(household, "Zahnarzt Kontrolle")
    ] == [2099]
    assert not events_titled(household, "Optiker Sehtest")
    assert counts.skipped == 1
    assert counts.created == CalendarEvent.objects.filter(household=household).count()
    assert counts.created == 5 + 4 + 5


@pytest.mark.django_db
def test_importing_again_updates_instead_of_duplicating(household):
    import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)
    changed = CALENDAR.read_bytes().replace(
        b"SUMMARY:Friseur", b"SUMMARY:Friseur Haarschnitt"
    )

    counts = import_ics(household=household, data=changed, now=NOW)

    assert (counts.created, counts.updated, counts.unchanged) == (0, 1, 13)
    assert events_titled(household, "Friseur Haarschnitt")
    assert CalendarEvent.objects.filter(household=household).count() == 14


@pytest.mark.django_db
def test_imports_stay_in_their_household(household, other_household):
    import_ics(household=other_household, data=CALENDAR.read_bytes(), now=NOW)

    counts = import_ics(household=household, data=CALENDAR.read_bytes(), now=NOW)

    assert counts.created == 14
    assert CalendarEvent.objects.filter(household=other_household).count() == 14


@pytest.mark.django_db
def test_a_file_that_is_not_icalendar_is_refused(household):
    with pytest.raises(CalendarFileError):
        import_ics(household=household, data=b"BEGIN:VCARD\nFN:Oma\n", now=NOW)
    assert not CalendarEvent.objects.exists()


@pytest.mark.django_db
def test_command_imports_and_reports_counts(household):
    out = StringIO()

    call_command("import_ics", str(CALENDAR), "--household", "becker", stdout=out)
    call_command("import_ics", str(CALENDAR), "--household", "becker", stdout=out)

    first, second = out.getvalue().strip().splitlines()
    assert "created" in first
    assert "0 created, 0 updated" in second
    assert "1 skipped" in second
    assert events_titled(household, "Zahnarzt Kontrolle")
    assert len(events_titled(household, "Klavierunterricht Lena")) == 4


@pytest.mark.django_db
def test_command_names_what_is_wrong(household, tmp_path):
    broken = tmp_path / "broken.ics"
    broken.write_text("not a calendar")

    with pytest.raises(CommandError, match=r"broken\.ics: not an iCalendar file"):
        call_command("import_ics", str(broken), "--household", "becker")
    with pytest.raises(CommandError, match="No household 'nobody'"):
        call_command("import_ics", str(CALENDAR), "--household", "nobody")
    with pytest.raises(CommandError, match=r"missing\.ics"):
        call_command(
            "import_ics", str(tmp_path / "missing.ics"), "--household", "becker"
        )


@pytest.mark.django_db
def test_imported_titles_are_kept_folded_for_provider_search(household, tmp_path):
    call_command("import_ics", str(CALENDAR), "--household", "becker")
    renamed = tmp_path / "renamed.ics"
    renamed.write_bytes(
        CALENDAR.read_bytes().replace(b"SUMMARY:Friseur", "SUMMARY:FRISÖR Öz".encode())
    )

    call_command("import_ics", str(renamed), "--household", "becker")

    folded = dict(
        CalendarEvent.objects.filter(household=household).values_list(
            "title", "folded_title"
        )
    )
    assert folded["Fußballtraining Paul"] == "fussballtraining paul"
    assert folded["Zahnarzt Kontrolle"] == "zahnarzt kontrolle"
    assert folded["FRISÖR Öz"] == "frisor oz"
    assert "Friseur" not in folded
