"""find_person weighs what a query says beyond its letters.

A given name heard the same but spelled otherwise, a title, a word for a
trade, a child's misspelled name, and a given name several people share.
"""

import json
from pathlib import Path

import pytest

from household.models import Membership, Role
from tests.builders import build_contact, build_member, committed
from yorik.bundles import import_household

COHEN = Path(__file__).resolve().parents[2] / "household" / "demo" / "cohen.json"


def find(api, query, **inputs):
    response = api.call("find_person", {"query": query, **inputs})
    assert response.status_code == 200, response.content
    body = response.json()
    rows = [
        (row.get("display_name") or row["name"], row["match"])
        for row in body["results"]
    ]
    return rows, body["ambiguous"]


# A given name heard the same --------------------------------------------------


@pytest.mark.parametrize(
    ("query", "heard", "match", "longer"),
    [
        # Catrin is a word of the household's names heard as Katrin.
        ("Katrin", "Catrin Vogel", "similar_name", "Katrina Berg"),
        # Stefan is a listed variant of Stephan, and heard the same.
        ("Stephan", "Stefan Wolf", "nickname", "Stephanie Wood"),
    ],
)
def test_a_name_heard_the_same_comes_before_a_longer_name_that_starts_alike(
    api, household, query, heard, match, longer
):
    build_contact(household, longer)
    build_contact(household, heard)

    rows, ambiguous = find(api, query)

    assert rows == [(heard, match), (longer, "name")]
    assert ambiguous is False


def test_a_name_as_written_comes_before_one_heard_the_same(api, household):
    build_contact(household, "Catrin Vogel")
    build_contact(household, "Katrin Seidel")

    rows, ambiguous = find(api, "Katrin")

    assert rows == [("Katrin Seidel", "name")]
    assert ambiguous is False


# A title ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "doctor",
    [
        {"display_name": "Dr. Ayşe Kaya"},
        {"display_name": "Ayşe Kaya", "title": "Dr. med."},
        {"display_name": "Ayşe Kaya", "organization": "Praxis Dr. Kaya"},
        {"display_name": "Ayşe Kaya", "relation": "Hausärztin"},
    ],
    ids=["name", "job title", "organization", "relation"],
)
def test_a_title_finds_the_person_who_carries_it_first(api, household, doctor):
    build_contact(household, "Deniz Kaya", relation="Kollege")
    build_contact(household, **doctor)

    titled, titled_ambiguous = find(api, "Dr. Kaya")
    _, plain_ambiguous = find(api, "Kaya")

    assert titled[0] == (doctor["display_name"], "name")
    assert [name for name, _ in titled] == [doctor["display_name"], "Deniz Kaya"]
    assert titled_ambiguous is False
    assert plain_ambiguous is True


def test_a_title_nobody_carries_leaves_the_question_open(api, household):
    build_contact(household, "Deniz Kaya")
    build_contact(household, "Ayşe Kaya")

    rows, ambiguous = find(api, "Prof. Kaya")

    assert [name for name, _ in rows] == ["Ayşe Kaya", "Deniz Kaya"]
    assert ambiguous is True


# A trade ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "contact", "match"),
    [
        (
            "die Werkstatt",
            {"display_name": "Autohaus Brandt", "kind": "business"},
            "name",
        ),
        ("der Optiker", {"display_name": "Fielmann", "tags": ["optician"]}, "relation"),
        ("the optician", {"display_name": "Fielmann", "tags": ["Optiker"]}, "relation"),
        (
            "my garage",
            {"display_name": "Kfz Meister Yilmaz", "kind": "business"},
            "name",
        ),
    ],
)
def test_a_trade_finds_the_contact_named_or_tagged_for_it(
    api, household, query, contact, match
):
    build_contact(household, "Bernd Schulz", relation="Nachbar")
    build_contact(household, **contact)

    rows, ambiguous = find(api, query)

    assert rows == [(contact["display_name"], match)]
    assert ambiguous is False


def test_the_household_s_own_word_for_a_trade_comes_before_a_business_name(
    api, household
):
    build_contact(household, "Frank Neumann", relation="Steuerberater")
    build_contact(household, "Steuerberatung Neumann", kind="business")

    rows, ambiguous = find(api, "mein Steuerberater")

    assert rows == [
        ("Frank Neumann", "relation"),
        ("Steuerberatung Neumann", "name"),
    ]
    assert ambiguous is False


# A child's misspelled name ----------------------------------------------------


@pytest.mark.parametrize("source", ["household", "auto"])
@pytest.mark.parametrize("query", ["Pual Becker", "Pual"])
def test_a_misspelled_child_is_found_on_the_household_source(
    api, household, source, query
):
    build_member(household, "jonas", first_name="Jonas", last_name="Becker")
    build_member(household, "paul", role="child", first_name="Paul", last_name="Becker")
    build_contact(household, "Gisela Becker")

    rows, _ = find(api, query, source=source)

    assert rows == [("Paul Becker", "similar_name")]


def test_a_misspelled_child_is_not_found_when_another_role_is_asked(api, household):
    build_member(household, "paul", role="child", first_name="Paul", last_name="Becker")

    rows, _ = find(api, "Pual Becker", source="household", role="member")

    assert rows == []


# A given name of several people -----------------------------------------------


@pytest.fixture
def cohen(db, api_as):
    household = committed(import_household)(bundle=json.loads(COHEN.read_text()))
    return api_as(Membership.objects.get(household=household, role=Role.ADMIN))


def test_a_given_name_of_several_people_asks_back_in_the_english_demo(cohen):
    rows, ambiguous = find(cohen, "Tal")

    assert rows == [
        ("Tal (from the building WhatsApp group)", "name"),
        ("Tal Avidan", "name"),
    ]
    assert ambiguous is True


def test_a_given_name_stored_alone_ties_with_the_full_names_that_start_with_it(
    api, household
):
    build_contact(household, "Hans")
    build_contact(household, "Hans Meier")
    build_contact(household, "Zoe Hans")

    body = api.call("find_person", {"query": "Hans"}).json()

    assert [row["display_name"] for row in body["results"]] == [
        "Hans",
        "Hans Meier",
        "Zoe Hans",
    ]
    assert body["ambiguous"] is True
    assert body["card"]["kind"] == "contact_picker"
