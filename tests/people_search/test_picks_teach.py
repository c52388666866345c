"""A pick on a picker card teaches its creator what their query meant; undo forgets."""

from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.builders import build_contact, build_member


@pytest.fixture
def tom(household):
    return build_member(household, "tom", first_name="Tom", last_name="Becker")


@pytest.fixture
def gisela(household):
    return build_contact(
        household, "Gisela Becker", first_name="Gisela", last_name="Becker"
    )


@pytest.fixture
def hans_meier(household):
    return build_contact(household, "Hans Meier", first_name="Hans", last_name="Meier")


@pytest.fixture
def hans_schulz(household):
    return build_contact(
        household, "Hans Schulz", first_name="Hans", last_name="Schulz"
    )


def ranked_card(api, query, *contacts):
    response = api.call(
        "list_contacts_for_picking",
        {
            "query": query,
            "ranked_picks": [
                {"id": contact.pk, "confidence": 0.5, "reason": "?"}
                for contact in contacts
            ],
        },
    )
    assert response.status_code == 200, response.content
    return response.json()["card"]["url"]


def pick_on(url, contact):
    """Pick the contact through the card's signed link; return the page after."""
    browser = Client()
    parts = urlsplit(url)
    token = parts.query.removeprefix("t=")
    picked = browser.post(f"{parts.path}pick/", {"contact_id": contact.pk, "t": token})
    assert picked.status_code == 302, picked.content
    return browser, token, browser.get(picked["Location"])


def first_row(api, query):
    response = api.call("find_person", {"query": query, "source": "contacts"})
    assert response.status_code == 200, response.content
    body = response.json()
    return body["results"][0] if body["results"] else None, body


def test_a_pick_for_a_word_teaches_it_and_undo_forgets(api_as, tom, gisela):
    api = api_as(tom)
    assert first_row(api, "Oma")[0] is None

    browser, token, page = pick_on(ranked_card(api, "Oma", gisela), gisela)

    text = page.content.decode()
    assert "Yorik merkt sich: „Oma“ ist Gisela Becker." in text
    row, body = first_row(api, "Oma")
    assert (row["id"], row["match"], body["ambiguous"]) == (gisela.pk, "learned", False)

    undone = browser.post(
        f"{urlsplit(page.request['PATH_INFO']).path}forget/", {"t": token}
    )
    assert undone.status_code == 302
    after = browser.get(undone["Location"]).content.decode()
    assert "Vergessen: Yorik nutzt diese Auswahl nicht für deine nächsten Fragen." in (
        after
    )
    assert "Yorik merkt sich" not in after
    assert first_row(api, "Oma")[0] is None


def test_a_pick_for_a_name_becomes_the_members_choice(
    api_as, admin_membership, tom, hans_meier, hans_schulz
):
    api = api_as(admin_membership)
    row, body = first_row(api, "Hans")
    assert body["ambiguous"] is True
    card = body["card"]["url"]

    _, _, page = pick_on(card, hans_meier)

    assert "Yorik merkt sich: mit „Hans“ meinst du Hans Meier." in (
        page.content.decode()
    )
    row, body = first_row(api, "Hans")
    assert (row["id"], row["match"], body["ambiguous"]) == (
        hans_meier.pk,
        "learned",
        False,
    )
    assert [r["id"] for r in body["results"]] == [hans_meier.pk, hans_schulz.pk]
    toms = first_row(api_as(tom), "Hans")[1]
    assert toms["ambiguous"] is True
    assert "learned" not in {r["match"] for r in toms["results"]}


def test_an_english_household_reads_the_lesson_in_english(api_as, other_household):
    dana = build_member(other_household, "dana", role="admin")
    grandma = build_contact(other_household, "Miriam Levi", first_name="Miriam")

    _, _, page = pick_on(ranked_card(api_as(dana), "my grandma", grandma), grandma)

    assert "Yorik will remember: “my grandma” is Miriam Levi." in page.content.decode()


def test_a_pick_on_a_card_without_a_query_teaches_nothing(api_as, tom, gisela):
    api = api_as(tom)

    _, _, page = pick_on(ranked_card(api, "", gisela), gisela)

    assert "Yorik merkt sich" not in page.content.decode()
    assert not tom.personal_words.exists()
