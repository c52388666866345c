"""Admin search asks the matching engine: admins find whom the assistant finds."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from household.models import Membership
from tests.builders import build_contact, build_lead, build_member

PASSWORD = "correct-horse-battery"


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    """Return a client logged in as the Becker household's admin."""
    assert client.login(username="anna", password=PASSWORD)
    return client


def rows(response, field):
    """Return the changelist's values of a linked column, in order."""
    return re.findall(
        rf'<th class="field-{field}"><a href="[^"]*">([^<]*)</a></th>', response.text
    )


def search(client, model, query, **params):
    return client.get(reverse(f"admin:{model}_changelist"), {"q": query, **params})


@pytest.fixture
def book(household):
    build_contact(
        household,
        "Gisela Becker",
        relation="Großmutter",
        aliases=["Oma", "Oma Gisela"],
    )
    build_contact(
        household, "Ruth Adler", relation="Schwiegermutter", aliases=["Oma Ruth"]
    )
    build_contact(household, "Thomas Müller", relation="Kollege (Anna)")
    build_contact(household, "Josef Huber", relation="Nachbar")
    build_contact(household, "Dirk Lehmann", relation="Klempner")


def test_contacts_are_found_by_relation_words_in_either_language(anna, book):
    oma = search(anna, "contacts_contact", "Oma")
    grandma = search(anna, "contacts_contact", "grandma")
    plumber = search(anna, "contacts_contact", "plumber")

    assert rows(oma, "display_name") == ["Gisela Becker", "Ruth Adler"]
    assert rows(grandma, "display_name") == ["Gisela Becker", "Ruth Adler"]
    assert rows(plumber, "display_name") == ["Dirk Lehmann"]


def test_contacts_are_found_by_nickname(anna, book):
    response = search(anna, "contacts_contact", "Sepp")

    assert rows(response, "display_name") == ["Josef Huber"]


def test_results_come_strongest_first_until_a_column_is_sorted(anna, household):
    build_contact(household, "Anton Berger")
    build_contact(household, "Berg")

    ranked = search(anna, "contacts_contact", "berg")
    by_name = search(anna, "contacts_contact", "berg", o="1")

    assert rows(ranked, "display_name") == ["Berg", "Anton Berger"]
    assert rows(by_name, "display_name") == ["Anton Berger", "Berg"]


def test_leads_profiles_and_memberships_are_found_by_nickname(anna, household):
    build_lead(household, "Robert", last_name="Levi")
    build_member(household, "sepp.huber", first_name="Josef", last_name="Huber")

    leads = search(anna, "household_lead", "Bob Levi")
    profiles = search(anna, "household_userprofile", "Sepp")
    memberships = search(anna, "household_membership", "Sepp")

    assert rows(leads, "first_name") == ["Robert"]
    assert rows(profiles, "username") == ["sepp.huber"]
    assert "Josef Huber" in memberships.text


def test_profiles_are_still_found_by_login_name(anna, household):
    build_member(household, "jb", first_name="Jonas", last_name="Becker")

    response = search(anna, "household_userprofile", "jb")

    assert rows(response, "username") == ["jb"]
