"""Admin change lists take the filters they offer and a short search, nothing else.

A filter the list does not offer, a date out of the calendar or a search too
long answers a 400 page before a row is read; a relation's filter is a search
box, so the page does not grow with the rows it could name.
"""

import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from household.services import create_calendar_event
from tests.builders import PASSWORD, build_contact, build_lead, build_member
from yorik.admin_site import MAX_SEARCH_LENGTH

BACKTRACKING = r"(.*)(.*)(.*)(.*)(.*)(.*)\6\5\4\3\2\1x"


@pytest.fixture
def anna(client, admin_membership):
    assert client.login(username="anna", password=PASSWORD)
    return client


def contacts_list() -> str:
    return reverse("admin:contacts_contact_changelist")


def filter_sidebar(html: str) -> str:
    return html.split('id="changelist-filter"', 1)[1].split("</nav>", 1)[0]


@pytest.mark.parametrize(
    "query",
    [
        {"notes__regex": BACKTRACKING},
        {"notes__regex": "("},
        {"notes__icontains": "hidden"},
        {"display_name": "Hans Becker"},
        {"status__regex": "^a"},
        {"status__exact": "active", "ref__startswith": "c"},
    ],
    ids=[
        "backtracking",
        "broken regex",
        "not a filter",
        "bare field",
        "by regex",
        "one of two",
    ],
)
def test_a_filter_the_list_does_not_offer_is_a_400_page_that_reads_no_row(
    anna, household, query
):
    build_contact(household, "Hans Becker", notes="hidden " * 50)

    with CaptureQueriesContext(connection) as queries:
        response = anna.get(contacts_list(), query)

    assert response.status_code == 400
    html = response.content.decode()
    assert "Diese Liste hat keinen solchen Filter." in html
    assert f'href="{contacts_list()}"' in html
    assert "Hans Becker" not in html
    assert not [q for q in queries.captured_queries if "contacts_contact" in q["sql"]]


def test_a_filter_the_list_does_not_offer_is_logged_as_suspicious(
    anna, household, caplog
):
    """As Django logs the refusal when it answers one itself."""
    response = anna.get(contacts_list(), {"notes__regex": BACKTRACKING})

    assert response.status_code == 400
    (record,) = [r for r in caplog.records if r.name.startswith("django.security.")]
    assert record.name == "django.security.DisallowedModelAdminLookup"
    assert record.levelname == "ERROR"
    assert "notes__regex" in record.getMessage()


def test_the_filters_the_list_offers_still_filter(anna, household):
    build_contact(household, "Hans Becker", status="active")
    build_contact(household, "Spam GmbH", status="spam", kind="business")

    response = anna.get(
        contacts_list(), {"status__exact": "spam", "kind__exact": "business"}
    )

    assert response.status_code == 200
    assert "Spam GmbH" in response.text
    assert "Hans Becker" not in response.text


@pytest.mark.parametrize(
    "date",
    [
        {"starts_at__year": "99999999999"},
        {"starts_at__year": "9999"},
        {"starts_at__year": "0"},
        {"starts_at__year": "20x5"},
        {"starts_at__year": "٢٠٢٥"},
        {"starts_at__year": "2025", "starts_at__month": "13"},
        {"starts_at__year": "2025", "starts_at__month": "5", "starts_at__day": "32"},
        {"starts_at__year": "1" * 5000},
    ],
    ids=[
        "huge",
        "9999",
        "zero",
        "not a number",
        "arabic digits",
        "month",
        "day",
        "long",
    ],
)
def test_a_date_out_of_the_calendar_is_a_400_page(anna, household, date):
    response = anna.get(reverse("admin:household_calendarevent_changelist"), date)

    assert response.status_code == 400
    assert "Diese Liste hat keinen solchen Filter." in response.content.decode()


def test_the_date_hierarchy_still_narrows_the_list(anna, household):
    create_calendar_event(
        household=household,
        title="Zahnarzt",
        starts_at=datetime(2025, 5, 2, 7, tzinfo=UTC),
    )
    create_calendar_event(
        household=household,
        title="Friseur",
        starts_at=datetime(2024, 5, 2, 7, tzinfo=UTC),
    )

    response = anna.get(
        reverse("admin:household_calendarevent_changelist"),
        {"starts_at__year": "2025", "starts_at__month": "5", "starts_at__day": "2"},
    )

    assert response.status_code == 200
    assert "Zahnarzt" in response.text
    assert "Friseur" not in response.text


def test_a_bad_value_of_an_offered_filter_goes_back_to_the_whole_list(anna, household):
    response = anna.get(
        reverse("admin:household_lead_changelist"), {"owner__id__exact": "ben"}
    )

    # Django's answer to a value its filter cannot use.
    assert response.status_code == 302
    assert response.url == reverse("admin:household_lead_changelist") + "?e=1"


def test_a_search_longer_than_the_cap_is_a_400_page_that_says_so(anna, household):
    build_contact(household, "Hans Becker")
    longest = ("Hans " * MAX_SEARCH_LENGTH)[:MAX_SEARCH_LENGTH]

    too_long = anna.get(contacts_list(), {"q": longest + "x"})
    at_the_cap = anna.get(contacts_list(), {"q": longest})

    assert too_long.status_code == 400
    assert (
        "Eine Suche darf höchstens 200 Zeichen lang sein." in too_long.content.decode()
    )
    assert "Hans Becker" not in too_long.content.decode()
    assert len(too_long.content) < 20_000
    assert at_the_cap.status_code == 200


def lead_list_queries(anna) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = anna.get(reverse("admin:household_lead_changelist"))
    assert response.status_code == 200
    return len(queries)


def test_the_lead_list_lists_no_owner_however_many_own_leads(anna, household):
    first = build_member(household, "ben", last_name="Eigner")
    build_lead(household, "Dana", owner=first)
    one_owner = lead_list_queries(anna)
    for number in range(5):
        owner = build_member(household, f"owner{number}", last_name=f"Eigner{number}")
        build_lead(household, "Dana", owner=owner)

    six_owners = lead_list_queries(anna)
    sidebar = filter_sidebar(
        anna.get(reverse("admin:household_lead_changelist")).content.decode()
    )

    assert six_owners == one_owner
    assert "Eigner" not in sidebar
    assert not re.search(r'href="[^"]*owner__id__exact', sidebar)
    assert 'data-field-name="owner"' in sidebar


def test_leads_are_filtered_by_the_owner_picked_in_the_search_box(anna, household):
    ben = build_member(household, "ben", first_name="Ben", last_name="Becker")
    lea = build_member(household, "lea", first_name="Lea", last_name="Becker")
    build_lead(household, "Dana", last_name="Levi", owner=ben)
    build_lead(household, "Eli", last_name="Cohen", owner=lea)

    response = anna.get(
        reverse("admin:household_lead_changelist"),
        {"owner__id__exact": ben.pk, "status__exact": "new"},
    )

    html = response.content.decode()
    sidebar = filter_sidebar(html)
    assert response.status_code == 200
    assert "Levi" in html
    assert "Cohen" not in html
    # The box shows whom the list is filtered by and keeps the other filter.
    assert f'<option value="{ben.pk}" selected>Ben Becker' in sidebar
    assert '<input type="hidden" name="status__exact" value="new">' in sidebar
    assert '<input type="hidden" name="owner__id__exact"' not in sidebar


def test_the_owner_search_box_offers_the_households_members(anna, household):
    build_member(household, "ben", first_name="Ben", last_name="Becker")

    response = anna.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "household",
            "model_name": "lead",
            "field_name": "owner",
            "term": "Ben",
        },
    )

    assert response.status_code == 200
    assert [row["text"] for row in response.json()["results"]] == [
        "Ben Becker (Mitglied)"
    ]
