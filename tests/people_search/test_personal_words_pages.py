"""A member's own words on their page, and per member in the household's admin."""

import pytest
from django.urls import reverse

from people_search.models import PersonalWord
from tests.builders import PASSWORD, LoginClient, build_contact, build_member


@pytest.fixture
def tom(household):
    return build_member(household, "tom", first_name="Tom", last_name="Becker")


@pytest.fixture
def ruth(household):
    return build_contact(household, "Ruth Adler", first_name="Ruth")


def logged_in(membership):
    browser = LoginClient()
    assert browser.login(username=membership.profile.username, password=PASSWORD)
    return browser


@pytest.fixture
def taught(api_as, admin_membership, tom, ruth):
    """Tom calls Ruth "Mutter" and Anna "meine Frau"; Anna calls Ruth "Oma"."""
    api_as(tom).call("remember_relation", {"contact_id": ruth.pk, "word": "Mutter"})
    api_as(tom).call(
        "remember_relation",
        {"user_id": admin_membership.profile_id, "word": "meine Frau"},
    )
    api_as(admin_membership).call(
        "remember_relation", {"contact_id": ruth.pk, "word": "Oma"}
    )


def test_a_member_sees_and_deletes_their_own_words_in_german(api_as, tom, ruth, taught):
    browser = logged_in(tom)

    page = browser.get("/de/dashboard/words").content.decode()

    assert "Meine Wörter" in page
    assert "„Mutter“" in page
    assert "Ruth Adler" in page
    assert "„meine Frau“" in page
    assert "Anna Becker" in page
    assert "„Oma“" not in page
    mutter = PersonalWord.objects.get(member=tom, word="Mutter")
    deleted = browser.post("/de/dashboard/words", {"word_id": mutter.pk})
    assert deleted.status_code == 302
    assert "„Mutter“" not in browser.get(deleted["Location"]).content.decode()
    found = api_as(tom).call("find_person", {"query": "Mutter"}).json()["results"]
    assert "learned" not in {row["match"] for row in found}


def test_a_member_cannot_delete_another_members_word(tom, admin_membership, taught):
    oma = PersonalWord.objects.get(member=admin_membership)

    logged_in(tom).post("/en/dashboard/words", {"word_id": oma.pk})

    assert PersonalWord.objects.filter(pk=oma.pk).exists()


def test_the_words_page_in_english(tom, taught):
    page = logged_in(tom).get("/en/dashboard/words").content.decode()

    assert "My words" in page
    assert "Delete “Mutter”" in page


def test_the_household_admin_sees_each_members_words_in_german(
    admin_membership, tom, taught
):
    browser = logged_in(admin_membership)
    changelist = reverse("admin:people_search_personalword_changelist")

    toms = browser.get(changelist, {"member__id__exact": tom.pk})

    assert toms.status_code == 200
    text = toms.content.decode()
    assert "Eigene Wörter" in text or "eigene Wörter" in text
    assert "Mutter" in text
    assert "meine Frau" in text
    assert ">Oma<" not in text
    assert "Beziehungswort" in text


def test_the_household_admin_deletes_a_word_and_adds_none(
    api_as, admin_membership, tom, taught
):
    browser = logged_in(admin_membership)
    word = PersonalWord.objects.get(member=tom, word="Mutter")

    response = browser.post(
        reverse("admin:people_search_personalword_delete", args=[word.pk]),
        {"post": "yes"},
    )

    assert response.status_code == 302
    assert not PersonalWord.objects.filter(pk=word.pk).exists()
    add = browser.get(reverse("admin:people_search_personalword_add"))
    assert add.status_code == 403
