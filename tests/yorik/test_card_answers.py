"""A picker's answers: none of these, a changed pick, household rows, its search."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.builders import build_contact, build_member
from tests.yorik.test_cards import picker, token_of
from yorik.models import Card


@pytest.fixture
def oma(household):
    return build_contact(household, "Gisela Becker", relation="Großmutter")


@pytest.fixture
def hans(household):
    return build_contact(household, "Hans Becker", relation="Onkel")


@pytest.fixture
def card(household, admin_membership, oma, hans):
    return picker(
        household,
        [(oma, 0.95, "Alias: Oma", False), (hans, 0.4, "Onkel", False)],
        query="Oma",
    )


def answer(client, card, *, answers=0, **choice):
    """Post one answer as the card's page sends it, through its signed link."""
    data = {"t": token_of(card), "answers": answers, **choice}
    return client.post(f"/cards/{card.pk}/pick/", data)


def read_back(api, card):
    response = api.get(f"/api/cards/{card.pk}/")
    assert response.status_code == 200
    return response.json()


# None of these


def test_none_of_these_is_recorded_and_read_back_by_the_assistant(client, api, card):
    response = answer(client, card, none_of_these="1")

    assert response.status_code == 302
    page = client.get(response["Location"])
    assert "Du hast „Keiner davon“ gewählt." in page.text
    assert 'name="contact_id"' not in page.text
    body = read_back(api, card)
    assert body["picked"] is None
    assert body["declined"] is True


def test_a_card_not_declined_has_no_declined_field(client, api, card, oma):
    before = read_back(api, card)
    answer(client, card, contact_id=oma.pk)

    assert "declined" not in before
    assert "declined" not in read_back(api, card)


def test_every_picker_offers_none_of_these(client, card):
    page = client.get(f"/cards/{card.pk}/?t={token_of(card)}")

    assert 'name="none_of_these"' in page.text
    assert "Keiner davon" in page.text


def test_none_of_these_in_an_english_household(client, api_as, other_household):
    creator = build_member(other_household, "dana", role="admin")
    dana = build_contact(other_household, "Dana Levi")
    card = picker(other_household, [(dana, 0.9, "", False)], query="Dana")

    page = client.get(f"/cards/{card.pk}/?t={token_of(card)}")
    declined = client.get(answer(client, card, none_of_these="1")["Location"])

    assert "None of these" in page.text
    assert "You chose “None of these”." in declined.text
    assert read_back(api_as(creator), card)["declined"] is True


def test_a_card_without_pick_to_chat_cannot_be_declined(client, household, oma):
    card = picker(household, [(oma, None, "", False)], pick_to_chat=False)

    response = answer(client, card, none_of_these="1")

    assert response.status_code == 400
    card.refresh_from_db()
    assert card.declined is False
    assert card.picked_at is None


@pytest.mark.parametrize(
    "choice",
    [
        {},
        {"none_of_these": "1", "contact_id": "1"},
        {"contact_id": "1", "user_id": "1"},
        {"contact_id": "1", "answers": "-1"},
    ],
)
def test_an_answer_names_exactly_one_choice(client, card, choice):
    data = {"t": token_of(card), **choice}

    response = client.post(f"/cards/{card.pk}/pick/", data)

    assert response.status_code == 400
    card.refresh_from_db()
    assert card.picked_at is None


# Changing the pick


def test_the_pick_can_be_changed_while_the_link_lives(client, api, card, oma, hans):
    token = token_of(card)
    first = answer(client, card, contact_id=oma.pk)
    confirmation = client.get(first["Location"])
    first_read = read_back(api, card)

    change_page = client.get(f"/cards/{card.pk}/", {"t": token, "change": "1"})
    changed = answer(client, card, answers=1, contact_id=hans.pk)

    assert "Auswahl ändern" in confirmation.text
    assert f"?t={token}&amp;change=1" in confirmation.text
    assert 'name="answers" value="1"' in change_page.text
    assert "Auswahl behalten" in change_page.text
    assert changed.status_code == 302
    latest = read_back(api, card)
    assert latest["picked"]["contact_id"] == hans.pk
    assert latest["picked"]["picked_at"] > first_read["picked"]["picked_at"]


def test_a_decline_can_become_a_pick_and_back(client, api, card, oma):
    answer(client, card, none_of_these="1")
    answer(client, card, answers=1, contact_id=oma.pk)
    picked = read_back(api, card)
    answer(client, card, answers=2, none_of_these="1")

    assert picked["picked"]["contact_id"] == oma.pk
    assert "declined" not in picked
    assert read_back(api, card)["declined"] is True


def test_a_double_submit_keeps_one_pick(client, api, card, oma):
    first = answer(client, card, contact_id=oma.pk)
    second = answer(client, card, contact_id=oma.pk)

    assert first.status_code == second.status_code == 302
    card.refresh_from_db()
    assert card.answers == 1
    assert read_back(api, card)["picked"]["contact_id"] == oma.pk


def test_an_outdated_tab_cannot_undo_a_change(client, card, oma, hans):
    answer(client, card, contact_id=oma.pk)
    answer(client, card, answers=1, contact_id=hans.pk)

    # A tab still showing the card as first picked.
    stale = answer(client, card, answers=1, none_of_these="1")

    assert stale.status_code == 409
    assert "inzwischen beantwortet" in stale.text
    assert "Ausgewählt: Hans Becker" in stale.text
    card.refresh_from_db()
    assert card.picked_contact == hans
    assert card.declined is False


def test_change_is_ignored_on_a_card_not_yet_answered(client, card):
    page = client.get(f"/cards/{card.pk}/", {"t": token_of(card), "change": "1"})

    assert "Auswahl behalten" not in page.text
    assert 'name="answers" value="0"' in page.text


# Household rows


@pytest.fixture
def beckers(household, admin_membership):
    """Three Becker contacts and, besides Anna, two Beckers of the household."""
    for name in ("Brigitte Becker", "Werner Becker", "Maximilian Becker"):
        build_contact(household, name)
    jonas = build_member(household, "jonas", last_name="Becker")
    lena = build_member(household, "lena", role="viewer", last_name="Becker")
    return admin_membership, jonas, lena


def becker_card(api):
    response = api.call("find_person", {"query": "Becker"})
    assert response.status_code == 200
    body = response.json()
    members = [row["id"] for row in body["results"] if row["source"] == "household"]
    return Card.objects.get(pk=body["card"]["id"]), members


def test_a_find_person_card_shows_the_household_rows_of_its_answer(
    client, api, beckers
):
    card, members = becker_card(api)

    page = client.get(f"/cards/{card.pk}/?t={token_of(card)}")

    assert len(members) == 3
    for membership in beckers:
        assert f'name="user_id" value="{membership.profile.pk}"' in page.text
        assert str(membership.profile) in page.text
    assert page.text.count("Haushaltsmitglied") == 3
    assert "Nur lesen" in page.text  # Lena's role


def test_a_household_row_is_picked_and_read_back_with_its_source(client, api, beckers):
    card, _ = becker_card(api)
    jonas = beckers[1].profile

    response = answer(client, card, user_id=jonas.pk)

    assert response.status_code == 302
    assert "Ausgewählt: Jonas Becker" in client.get(response["Location"]).text
    assert read_back(api, card)["picked"] == {
        "source": "household",
        "id": jonas.pk,
        "user_id": jonas.pk,
        "display_name": "Jonas Becker",
        "picked_at": read_back(api, card)["picked"]["picked_at"],
    }


def test_household_rows_take_no_more_queries_as_they_grow(
    client, api, household, beckers, django_assert_max_num_queries
):
    card, _ = becker_card(api)
    link = f"/cards/{card.pk}/?t={token_of(card)}"
    with CaptureQueriesContext(connection) as three_members:
        client.get(link)
    queries = len(three_members)
    for name in ("mia", "ole", "ben"):
        build_member(household, name, last_name="Becker")
    more, _ = becker_card(api)

    with django_assert_max_num_queries(queries):
        page = client.get(f"/cards/{more.pk}/?t={token_of(more)}")

    assert page.text.count('name="user_id"') == 6


@pytest.mark.parametrize("whose", ["not_on_card", "foreign", "removed"])
def test_only_the_cards_own_live_members_can_be_picked(
    client, api, household, other_household, beckers, whose
):
    card, _ = becker_card(api)
    target = {
        "not_on_card": lambda: build_member(household, "kai").profile.pk,
        "foreign": lambda: build_member(other_household, "dana").profile.pk,
        "removed": lambda: beckers[2].profile.pk,
    }[whose]()
    if whose == "removed":
        beckers[2].status = "removed"
        beckers[2].save()

    response = answer(client, card, user_id=target)

    assert response.status_code == 400
    card.refresh_from_db()
    assert card.picked_at is None


# Searching a long picker


@pytest.fixture
def long_card(household, admin_membership):
    contacts = [build_contact(household, f"Kontakt {n:02}") for n in range(20)]
    contacts.append(build_contact(household, "Jürgen Müller", relation="Nachbar"))
    return picker(household, [(c, None, "", False) for c in contacts], ranked=False)


def row_titles(page):
    return [
        part.split("<")[0] for part in page.text.split('<span class="row-title">')[1:]
    ]


def test_a_picker_of_more_than_20_rows_has_a_search(client, long_card):
    page = client.get(f"/cards/{long_card.pk}/?t={token_of(long_card)}")

    assert 'type="search"' in page.text
    assert "Auf dieser Karte suchen" in page.text
    assert "data-card-search" in page.text
    assert len(row_titles(page)) == 21
    assert 'data-search="jurgen muller nachbar"' in page.text


def test_a_short_picker_has_no_search(client, card):
    page = client.get(f"/cards/{card.pk}/?t={token_of(card)}")

    assert 'type="search"' not in page.text
    assert "data-card-search" not in page.text


@pytest.mark.parametrize("query", ["mueller", "MÜLLER", "jürg", "nachbar"])
def test_the_search_works_as_a_plain_get(client, long_card, query):
    page = client.get(f"/cards/{long_card.pk}/", {"t": token_of(long_card), "q": query})

    assert row_titles(page) == ["Jürgen Müller"]
    assert "Alle zeigen" in page.text
    # A pick from the filtered list still reaches the card.
    assert 'name="contact_id"' in page.text


def test_a_search_finding_nothing_says_so(client, long_card):
    page = client.get(
        f"/cards/{long_card.pk}/", {"t": token_of(long_card), "q": "Zebra"}
    )

    assert row_titles(page) == []
    assert "Nichts auf dieser Karte passt dazu." in page.text
    assert "data-search-empty hidden" not in page.text
    assert "Keiner davon" in page.text


def test_a_search_while_changing_the_pick_stays_in_the_change(client, long_card):
    answer(client, long_card, contact_id=long_card.payload["picks"][0]["contact_id"])

    page = client.get(
        f"/cards/{long_card.pk}/",
        {"t": token_of(long_card), "change": "1", "q": "Müller"},
    )

    assert '<input type="hidden" name="change" value="1">' in page.text
    assert row_titles(page) == ["Jürgen Müller"]
    assert "Auswahl behalten" in page.text


def test_openapi_documents_declined_and_the_picks_source(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    card = schema["components"]["schemas"]["CardRead"]["properties"]
    picked = schema["components"]["schemas"]["Picked"]["properties"]
    assert card["declined"]["type"] == "boolean"
    assert {"source", "id", "contact_id", "user_id"} <= set(picked)
