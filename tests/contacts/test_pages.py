import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from tests.builders import build_contact, build_member

XSS = "<img src=x onerror=alert(1)>"


def logged_in(membership):
    client = Client()
    client.force_login(membership.profile.user)
    return client


@pytest.fixture
def member(household):
    """A plain member, not staff, with a login."""
    return build_member(household, "jonas", last_name="Becker")


@pytest.fixture
def browser(member):
    return logged_in(member)


def listed(response):
    """Return the contact names on a list page, in order."""
    return re.findall(r'<span class="row-title">([^<]*)</span>', response.text)


@pytest.fixture
def uncle(household):
    return build_contact(
        household,
        "Hans Becker",
        relation="Onkel",
        aliases=["Onkel Hans", "Hansi"],
        tags=["familie", "berlin"],
        channels=[
            {"kind": "phone", "value": "030 1234567", "label": "mobil"},
            {"kind": "email", "value": "Hans@Example.org"},
            {"kind": "whatsapp", "value": "491711234567@s.whatsapp.net"},
        ],
        addresses=[
            {
                "kind": "home",
                "line1": "Hauptstr. 5",
                "postcode": "10115",
                "city": "Berlin",
                "country": "DE",
            }
        ],
    )


# Login


def test_pages_ask_for_a_login(client, db):
    response = client.get("/contacts/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/contacts/"


def test_a_member_who_is_not_staff_logs_in(client, member):
    page = client.get("/accounts/login/?next=/contacts/")
    response = client.post(
        "/accounts/login/",
        {
            "username": "jonas",
            "password": "correct-horse-battery",
            "next": "/contacts/",
        },
    )

    assert page.status_code == 200
    assert 'name="username"' in page.text
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert response.status_code == 302
    assert response["Location"] == "/contacts/"
    assert client.get("/contacts/").status_code == 200


def test_a_wrong_password_is_refused(client, member):
    response = client.post(
        "/accounts/login/", {"username": "jonas", "password": "wrong"}
    )

    assert response.status_code == 200
    assert 'role="alert"' in response.text


def test_the_login_page_speaks_german_to_a_german_browser(client, db):
    response = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="de")

    assert "<h1>Anmelden</h1>" in response.text
    assert '<html lang="de">' in response.text


def test_logging_out_ends_the_session(browser):
    response = browser.post("/accounts/logout/")

    assert response.status_code == 302
    assert browser.get("/contacts/").status_code == 302


def test_a_login_without_a_household_is_forbidden(client, db):
    user = get_user_model().objects.create_user("stranger", password="x-y-z-1-2-3")
    client.force_login(user)

    assert client.get("/contacts/").status_code == 403


def test_a_deleted_profile_is_forbidden(household, member):
    member.profile.deleted_at = timezone.now()
    member.profile.save()

    assert logged_in(member).get("/contacts/").status_code == 403


def test_a_removed_member_is_forbidden(household):
    removed = build_member(household, "rita", status="removed")

    assert logged_in(removed).get("/contacts/").status_code == 403


# The list


def test_the_list_shows_the_households_active_and_pending_contacts(
    browser, household, other_household
):
    build_contact(household, "Zahnarzt Weber", kind="business")
    build_contact(household, "Ärztehaus Mitte", status="pending")
    build_contact(household, "Apotheke")
    build_contact(household, "Sam Spam", status="spam")
    build_contact(other_household, "Avi Cohen")

    response = browser.get("/contacts/")

    assert response.status_code == 200
    assert '<html lang="de">' in response.text
    assert listed(response) == ["Apotheke", "Ärztehaus Mitte", "Zahnarzt Weber"]
    assert "3 Kontakte" in response.text


def test_search_uses_the_matching_engine(browser, household, uncle):
    build_contact(household, "Jürgen Müller")
    build_contact(household, "Gisela Becker", relation="Großmutter", aliases=["Oma"])

    assert listed(browser.get("/contacts/", {"q": "mueller"})) == ["Jürgen Müller"]
    assert listed(browser.get("/contacts/", {"q": "oma"})) == ["Gisela Becker"]
    assert listed(browser.get("/contacts/", {"q": "becker hans"})) == ["Hans Becker"]
    assert listed(browser.get("/contacts/", {"q": "030 1234567"})) == ["Hans Becker"]
    assert listed(browser.get("/contacts/", {"q": "nobody"})) == []


def test_search_ranks_exact_names_first(browser, household):
    build_contact(household, "Annabell Zorn")
    build_contact(household, "Anna")

    assert listed(browser.get("/contacts/", {"q": "anna"})) == ["Anna", "Annabell Zorn"]


def test_search_understands_relation_words_nicknames_and_titles(browser, household):
    build_contact(household, "Gisela Becker", relation="Großmutter", aliases=["Oma"])
    build_contact(household, "Ruth Adler", aliases=["Oma Ruth"])
    build_contact(household, "Thomas Müller", relation="Kollege")
    build_contact(household, "Josef Huber", relation="Nachbar")
    build_contact(household, "Dirk Lehmann", relation="Klempner")

    assert listed(browser.get("/contacts/", {"q": "Oma"})) == [
        "Gisela Becker",
        "Ruth Adler",
    ]
    assert listed(browser.get("/contacts/", {"q": "grandma"})) == [
        "Gisela Becker",
        "Ruth Adler",
    ]
    assert listed(browser.get("/contacts/", {"q": "Sepp"})) == ["Josef Huber"]
    assert listed(browser.get("/contacts/", {"q": "der Klempner"})) == ["Dirk Lehmann"]
    assert listed(browser.get("/contacts/", {"q": "Nachbarn"})) == ["Josef Huber"]
    assert listed(browser.get("/contacts/", {"q": "homas"})) == ["Thomas Müller"]


def test_search_lists_first_who_carries_the_title_as_find_person_does(
    browser, household
):
    build_contact(household, "Deniz Kaya")
    build_contact(household, "Zeynep Kaya", title="Dr. med.")

    assert listed(browser.get("/contacts/", {"q": "Dr. Kaya"})) == [
        "Zeynep Kaya",
        "Deniz Kaya",
    ]
    assert listed(browser.get("/contacts/", {"q": "Kaya"})) == [
        "Deniz Kaya",
        "Zeynep Kaya",
    ]


def test_search_ranks_by_match_strength_across_pages(browser, household):
    for index in range(30):
        build_contact(household, f"Anton Berger {index:02}")
    build_contact(household, "Berg")

    first = browser.get("/contacts/", {"q": "berg"})
    second = browser.get("/contacts/", {"q": "berg", "page": 2})

    assert listed(first)[:2] == ["Berg", "Anton Berger 00"]
    assert listed(second) == [f"Anton Berger {index}" for index in range(24, 30)]
    assert "31 Kontakte" in first.text


def test_status_and_kind_filters(browser, household):
    build_contact(household, "Autohaus Klein", kind="business", status="archived")
    build_contact(household, "Klaus Klein", status="archived")
    build_contact(household, "Karl Klein")

    archived = browser.get("/contacts/", {"status": "archived"})
    businesses = browser.get("/contacts/", {"status": "archived", "kind": "business"})
    searched = browser.get("/contacts/", {"q": "klein", "kind": "person"})

    assert listed(archived) == ["Autohaus Klein", "Klaus Klein"]
    assert listed(businesses) == ["Autohaus Klein"]
    assert listed(searched) == ["Karl Klein"]
    assert '<option value="business" selected>' in businesses.text


def test_an_unknown_filter_shows_an_error_and_the_default_list(browser, household):
    build_contact(household, "Karl Klein")

    response = browser.get("/contacts/", {"status": "deleted"})

    assert response.status_code == 200
    assert listed(response) == ["Karl Klein"]
    assert 'class="field-error"' in response.text


def test_the_list_is_paginated_keeping_the_filters(browser, household):
    for index in range(30):
        build_contact(household, f"Müller {index:02}")
    build_contact(household, "Schmidt")

    first = browser.get("/contacts/", {"q": "muller"})
    second = browser.get("/contacts/", {"q": "muller", "page": 2})

    assert len(listed(first)) == 25
    assert "Seite 1 von 2" in first.text
    assert 'href="?q=muller&amp;page=2"' in first.text
    assert listed(second) == [f"Müller {index}" for index in range(25, 30)]
    assert "30 Kontakte" in second.text


def test_user_text_on_the_list_is_text(browser, household):
    build_contact(household, XSS, relation="Ignore previous instructions")

    response = browser.get("/contacts/")

    assert "<img" not in response.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in response.text
    assert "Ignore previous instructions" in response.text


def test_an_english_household_reads_english(other_household):
    dana = build_member(other_household, "dana")
    build_contact(other_household, "Avi Cohen", kind="business")

    response = logged_in(dana).get("/contacts/")

    assert '<html lang="en">' in response.text
    assert "1 contact" in response.text
    assert ">Business<" in response.text


# One contact


def test_the_contact_page_shows_everything_with_links(browser, uncle):
    response = browser.get(f"/contacts/{uncle.pk}/")

    text = response.text
    assert response.status_code == 200
    assert "<h1>Hans Becker</h1>" in text
    assert "Onkel" in text
    assert "Onkel Hans, Hansi" in text
    assert "familie" in text
    assert 'href="tel:+49301234567"' in text
    assert 'href="mailto:hans@example.org"' in text
    assert "491711234567@s.whatsapp.net" in text
    assert "Telefon · mobil" in text
    assert "Hauptstr. 5" in text
    assert "10115 Berlin" in text
    assert "Privat" in text


def test_another_households_contact_is_not_found(other_household, uncle):
    dana = build_member(other_household, "dana")

    assert logged_in(dana).get(f"/contacts/{uncle.pk}/").status_code == 404


def test_an_unknown_contact_is_not_found(browser, uncle):
    assert browser.get(f"/contacts/{uncle.pk + 1000}/").status_code == 404


def test_user_text_on_the_contact_page_is_text(browser, household):
    contact = build_contact(household, XSS, aliases=[XSS], tags=["<b>x</b>"])

    response = browser.get(f"/contacts/{contact.pk}/")

    assert "<img" not in response.text
    assert "<b>x</b>" not in response.text
