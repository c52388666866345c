"""A household's rows are counted in one statement, bounded, and kept a while;
a small household's searches, and a large one's that the trigram indexes
answer, are planned once per connection, a large one's two-letter searches
per call, all with the same answers."""

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact
from household.models import Lead, Membership
from people_search.index.models import NameWord
from tests.builders import build_contact, build_lead, build_member
from yorik import sizes


@pytest.fixture(autouse=True)
def fresh_counts():
    caches["local"].clear()
    yield
    caches["local"].clear()


def test_every_counted_table_is_counted_in_one_statement(household, other_household):
    build_contact(household, "Hans Müller")
    build_contact(household, "Eva Müller")
    build_lead(household, "Dana", last_name="Levi")
    build_contact(other_household, "Noa Cohen")

    with CaptureQueriesContext(connection) as context:
        contacts = sizes.household_rows(Contact, household_id=household.pk)
        leads = sizes.household_rows(Lead, household_id=household.pk)
        members = sizes.household_rows(Membership, household_id=household.pk)
        words = sizes.household_rows(NameWord, household_id=household.pk)

    assert (contacts, leads, members) == (2, 1, household.memberships.count())
    assert words == NameWord.objects.filter(household=household).count()
    assert len(context.captured_queries) == 1


def test_a_count_stops_at_its_bound_and_is_kept(household, monkeypatch):
    monkeypatch.setattr(sizes, "COUNTED_UP_TO", 2)
    for index in range(3):
        build_contact(household, f"Kontakt {index}")

    assert sizes.household_rows(Contact, household_id=household.pk) == 2
    build_contact(household, "Noch einer")
    with CaptureQueriesContext(connection) as context:
        assert sizes.household_rows(Contact, household_id=household.pk) == 2
    assert context.captured_queries == []


def test_one_plan_fits_a_household_below_the_line(household, monkeypatch):
    build_contact(household, "Hans Müller")
    build_contact(household, "Eva Müller")

    assert sizes.one_plan_fits(Contact, household_id=household.pk)
    caches["local"].clear()
    monkeypatch.setattr(sizes, "ONE_PLAN_BELOW", 2)
    assert not sizes.one_plan_fits(Contact, household_id=household.pk)


def prepared_searches():
    """Return how many of this connection's prepared statements are searches."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements "
            "WHERE statement LIKE %s OR statement LIKE %s",
            ["%match_tier%", "%match_group%"],
        )
        return cursor.fetchone()[0]


def search_often(api, query="Müller"):
    """Call find_person and people_search more often than psycopg's
    prepare_threshold; return their answers."""
    answers = []
    for _ in range(6):
        answers.append(api.call("find_person", {"query": query}).json())
        answers.append(api.call("people_search", {"query": query}).json())
    return answers


def three_muellers(household):
    build_contact(household, "Hans Müller")
    build_member(household, "eva", first_name="Eva", last_name="Müller")
    build_lead(household, "Dana", last_name="Müller")
    connection.close()  # A connection of its own, with no statements prepared.


@pytest.mark.django_db(transaction=True)
def test_a_small_households_searches_are_prepared(api, household):
    three_muellers(household)

    answers = search_often(api, "mü")

    assert prepared_searches() >= 3  # find_person's two sources, people_search's
    assert answers[-2]["count"] == 2
    assert answers[-1]["totalCount"] == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("query", "prepared"),
    [
        ("Müller", True),  # each term has trigrams
        ("mü", False),  # no trigram: planned for each call's values
    ],
)
def test_a_large_households_searches_are_prepared_where_trigrams_serve_them(
    api, household, monkeypatch, query, prepared
):
    monkeypatch.setattr(sizes, "ONE_PLAN_BELOW", 1)
    three_muellers(household)

    answers = search_often(api, query)

    assert prepared_searches() >= 3 if prepared else prepared_searches() == 0
    assert answers[-2]["count"] == 2
    assert answers[-1]["totalCount"] == 2


QUESTIONS = [
    ("find_person", {"query": "Müller"}),
    ("find_person", {"query": "meine Oma"}),
    ("find_person", {"query": "Mueler"}),
    ("find_person", {"query": "030 1234567"}),
    ("find_person", {"query": "mü"}),
    ("people_search", {"query": "Müller"}),
    ("people_search", {"query": "Mueler"}),
    ("people_search", {"query": "0171 555"}),
    ("search_anything", {"query": "Oma"}),
]


def answers(api):
    """Return each question's answer without its card, whose id is new each time."""
    found = []
    for skill, inputs in QUESTIONS:
        answer = api.call(skill, inputs).json()
        answer.pop("card", None)
        found.append(answer)
    return found


def test_every_plan_finds_the_same_rows(api, household, monkeypatch):
    build_contact(
        household,
        "Gisela Müller",
        relation="Oma",
        channels=[{"kind": "phone", "value": "030 1234567"}],
    )
    build_contact(household, "Hans Müller", relation="Zahnarzt")
    build_contact(household, "Müllermeister GmbH", kind="business")
    build_member(household, "eva", first_name="Eva", last_name="Müller")
    build_lead(household, "Dana", last_name="Mueller", phone="+49 171 5550000")

    small = answers(api)
    caches["local"].clear()
    monkeypatch.setattr(sizes, "ONE_PLAN_BELOW", 1)

    assert answers(api) == small
    assert [len(answer.get("results", answer.get("items"))) for answer in small] == [
        4,
        1,
        3,
        1,
        4,
        2,
        2,
        1,
        1,
    ]
