"""Typos find people on every surface when nothing matches literally."""

import pytest
from django.urls import reverse

from tests.builders import build_contact, build_lead, build_member


@pytest.fixture
def beckers(household):
    build_contact(household, "Hans Becker", relation="Onkel")
    build_contact(household, "Gisela Becker", relation="Großmutter")
    build_member(household, "jonas", first_name="Jonas", last_name="Schneider")
    return household


@pytest.mark.parametrize("source", ["contacts", "auto"])
def test_find_person_finds_a_misspelled_contact_as_a_similar_name(api, beckers, source):
    body = api.call("find_person", {"query": "Hans Bekker", "source": source}).json()

    assert [(r["display_name"], r["match"]) for r in body["results"]] == [
        ("Hans Becker", "similar_name")
    ]


@pytest.mark.parametrize("query", ["Jonas Schnieder", "Mr Jonas Schneidr"])
def test_find_person_finds_a_misspelled_household_member(api, beckers, query):
    body = api.call("find_person", {"query": query, "source": "household"}).json()

    assert [(r["name"], r["match"]) for r in body["results"]] == [
        ("Jonas Schneider", "similar_name")
    ]


def test_find_person_finds_the_only_contact_with_a_surname_under_another_name(
    api, beckers
):
    build_contact(beckers, "Erik Lindenlechner")
    build_contact(beckers, "Peter Meier")

    found = api.call("find_person", {"query": "Peter Lindenlechner"}).json()
    unknown = api.call("find_person", {"query": "Peter Quast"}).json()

    assert [(r["display_name"], r["match"]) for r in found["results"]] == [
        ("Erik Lindenlechner", "similar_name")
    ]
    assert (unknown["results"], unknown["count"]) == ([], 0)


def test_a_surname_before_a_comma_is_the_surname(api, beckers):
    """ "Lindenlechner, Peter" is written surname first, as on a letter."""
    build_contact(beckers, "Erik Lindenlechner")
    build_contact(beckers, "Peter Meier")

    found = api.call("find_person", {"query": "Herr Lindenlechner, Peter"}).json()

    assert [(r["display_name"], r["match"]) for r in found["results"]] == [
        ("Erik Lindenlechner", "similar_name")
    ]


def test_a_literal_match_keeps_the_typo_lane_out(api, beckers):
    build_contact(beckers, "Hans Bekker")

    body = api.call("find_person", {"query": "Hans Bekker"}).json()

    assert [(r["display_name"], r["match"]) for r in body["results"]] == [
        ("Hans Bekker", "name")
    ]


def test_a_name_nobody_has_finds_nobody(api, beckers):
    body = api.call("find_person", {"query": "Wilhelmina Quast"}).json()

    assert (body["results"], body["count"]) == ([], 0)


def test_search_anything_finds_misspelled_contacts(api, beckers):
    body = api.call("search_anything", {"query": "Gisla Becker"}).json()

    assert [i["name"] for i in body["items"] if i["kind"] == "contact"] == [
        "Gisela Becker"
    ]


def test_the_contact_page_finds_a_misspelled_name(client, admin_membership, beckers):
    client.force_login(admin_membership.profile.user)

    page = client.get("/contacts/", {"q": "Bekker"}).text

    assert "Hans Becker" in page
    assert "Gisela Becker" in page


def test_admin_search_finds_misspelled_contacts_and_leads(
    client, admin_membership, beckers
):
    build_lead(beckers, "Dana", last_name="Levi", owner=admin_membership)
    client.force_login(admin_membership.profile.user)

    contacts = client.get(reverse("admin:contacts_contact_changelist"), {"q": "Bekker"})
    leads = client.get(reverse("admin:household_lead_changelist"), {"q": "Dana Levy"})

    assert "Hans Becker" in contacts.text
    assert "Levi" in leads.text


def test_another_households_names_are_never_similar(api, beckers, other_household):
    build_contact(other_household, "Hans Bäcker")

    body = api.call("find_person", {"query": "Hans Baecker"}).json()

    assert [r["display_name"] for r in body["results"]] == ["Hans Becker"]


def test_the_lane_is_planned_once_and_still_finds_each_households_own(
    api, api_as, beckers, other_household
):
    """The lane's statement is prepared on the connection after a few calls
    and planned for no household in particular; each household's calls still
    find its own names, before and after."""
    from django.db import connection

    from tests.builders import build_member

    build_contact(other_household, "Hans Bäcker")
    levi = api_as(build_member(other_household, "dana", role="admin"))

    for _ in range(4):
        ours = api.call("find_person", {"query": "Hans Bekker"}).json()
        theirs = levi.call("find_person", {"query": "Hans Bekker"}).json()
        assert [r["display_name"] for r in ours["results"]] == ["Hans Becker"]
        assert [r["display_name"] for r in theirs["results"]] == ["Hans Bäcker"]

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%%query_words%%'"
        )
        plans = cursor.fetchall()
    assert len(plans) == 1
    generic, custom = plans[0]
    assert generic >= 1
    assert custom == 0
