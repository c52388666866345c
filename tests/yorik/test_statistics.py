"""A bulk write leaves the planner statistics of the tables it filled.

The imports commit for real here (the statistics views count committed rows
only), so each test starts from tables analysed empty: what an earlier test
left in them cannot change the threshold.
"""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from contacts.models import Contact, ContactChannel
from household.icalendar_import import import_ics
from household.models import CalendarEvent, Household
from tests.builders import build_household
from yorik.statistics import analyze_after_commit

pytestmark = pytest.mark.django_db(transaction=True)


def analysed_empty(*models):
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"ANALYZE {model._meta.db_table}")


def statistics(model) -> tuple[float, int]:
    """Return the rows the planner believes the table holds, and its ANALYZE count."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_class.reltuples, stats.analyze_count FROM pg_class "
            "JOIN pg_stat_user_tables AS stats ON stats.relid = pg_class.oid "
            "WHERE pg_class.oid = %s::regclass",
            [model._meta.db_table],
        )
        return cursor.fetchone()


def calendar_of(events: int, *, first: int = 0) -> bytes:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Yorik tests//DE"]
    start = datetime(2025, 1, 6, 9, tzinfo=UTC)
    for index in range(first, first + events):
        lines += [
            "BEGIN:VEVENT",
            f"UID:termin-{index}@yorik.test",
            f"DTSTART:{start + timedelta(hours=index):%Y%m%dT%H%M%SZ}",
            f"SUMMARY:Termin {index}",
            "END:VEVENT",
        ]
    return "\r\n".join([*lines, "END:VCALENDAR", ""]).encode()


def test_a_bundle_import_analyses_the_tables_it_filled(tmp_path):
    analysed_empty(Contact, ContactChannel)
    _, contact_analyses = statistics(Contact)
    bundle = tmp_path / "becker.json"
    bundle.write_text(
        json.dumps(
            {
                "format": "yorik.household/1",
                "household": {"slug": "becker", "name": "Familie Becker"},
                "contacts": [
                    {
                        "display_name": f"Kontakt {index}",
                        "channels": [
                            {"kind": "phone", "value": f"0151 2345{index:04d}"}
                        ],
                    }
                    for index in range(60)
                ],
            }
        )
    )

    call_command("import_household", str(bundle), verbosity=0)

    assert statistics(Contact) == (60, contact_analyses + 1)
    assert statistics(ContactChannel)[0] == 60


def test_a_small_import_into_a_large_calendar_analyses_nothing(tmp_path):
    household = build_household("becker")
    analysed_empty(CalendarEvent)
    _, analyses = statistics(CalendarEvent)
    import_ics(household=household, data=calendar_of(600))
    assert statistics(CalendarEvent) == (600, analyses + 1)
    more = tmp_path / "more.ics"
    # More than autovacuum's 50 rows, less than its tenth of the table.
    more.write_bytes(calendar_of(60, first=600))

    call_command("import_ics", str(more), "--household", "becker", verbosity=0)

    assert CalendarEvent.objects.count() == 660
    assert statistics(CalendarEvent) == (600, analyses + 1)


def test_an_import_that_rolls_back_analyses_nothing():
    household = build_household("becker")
    analysed_empty(CalendarEvent)
    before = statistics(CalendarEvent)

    with transaction.atomic():
        import_ics(household=household, data=calendar_of(60))
        transaction.set_rollback(True)

    assert statistics(CalendarEvent) == before


def test_an_analysis_that_fails_is_logged_and_the_write_stands(caplog, monkeypatch):
    def fail(tables, *, household_id, using):
        raise RuntimeError("the server went away")

    monkeypatch.setattr("yorik.statistics.analyze_changed_tables", fail)
    with transaction.atomic():
        household = build_household("becker")
        analyze_after_commit([Household], household_id=household.pk)

    assert Household.objects.filter(pk=household.pk).exists()
    assert "the server went away" in caplog.text
