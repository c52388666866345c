"""Admin change lists take the filters they offer and a short search, nothing else.

A filter the list does not offer, a date out of the calendar or a search too
long answers a 400 page before a row is read.
"""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from household.services import create_calendar_event
from tests.builders import PASSWORD, build_contact
from yorik.admin_site import MAX_SEARCH_LENGTH

BACKTRACKING = r"(.*)(.*)(.*)(.*)(.*)(.*)\6\5\4\3\2\1x"


@pytest.fixture
def anna(client, admin_membership):
    assert client.login(username="anna", password=PASSWORD)
    return client


def contacts_list() -> str:
    return reverse("admin:contacts_contact_changelist")


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
    assert "This list has no such filter." in html
    assert f'href="{contacts_list()}"' in html
    assert "Hans Becker" not in html
    assert not [q for q in queries.captured_queries if "contacts_contact" in q["sql"]]


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
    assert "This list has no such filter." in response.content.decode()


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


def test_a_search_longer_than_the_cap_is_a_400_page_that_says_so(anna, household):
    build_contact(household, "Hans Becker")
    longest = ("Hans " * MAX_SEARCH_LENGTH)[:MAX_SEARCH_LENGTH]

    too_long = anna.get(contacts_list(), {"q": longest + "x"})
    at_the_cap = anna.get(contacts_list(), {"q": longest})

    assert too_long.status_code == 400
    assert "Search for at most 200 characters." in too_long.content.decode()
    assert "Hans Becker" not in too_long.content.decode()
    assert len(too_long.content) < 20_000
    assert at_the_cap.status_code == 200
