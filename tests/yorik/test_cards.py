import io
import time
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from tests.builders import build_contact, build_member
from yorik.cards import card_link, create_card
from yorik.models import Card

XSS = "<img src=x onerror=alert(1)>"


def creator_of(household):
    """Return who test cards are emitted for: the household's first admin.

    A card opens through its link only while its creator is an active member.
    """
    admin = household.memberships.filter(role="admin").order_by("pk").first()
    return (admin or build_member(household, "kai", role="admin")).profile


def picker(household, picks, *, query="", ranked=True, pick_to_chat=True):
    """Store a contact_picker card of (contact, confidence, reason, padded) rows."""
    return create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": query,
            "ranked": ranked,
            "picks": [
                {
                    "contact_id": contact.pk,
                    "confidence": confidence,
                    "reason": reason,
                    "padded": padded,
                }
                for contact, confidence, reason, padded in picks
            ],
        },
        created_by=creator_of(household),
        pick_to_chat=pick_to_chat,
    )


@pytest.fixture
def oma(household):
    return build_contact(
        household,
        "Gisela Becker",
        relation="Großmutter",
        aliases=["Oma"],
        channels=[{"kind": "phone", "value": "030 1234567"}],
    )


@pytest.fixture
def hans(household):
    return build_contact(
        household,
        "Hans Becker",
        relation="Onkel",
        channels=[{"kind": "email", "value": "hans@example.org"}],
    )


@pytest.fixture
def card(household, admin_membership, oma, hans):
    return picker(
        household,
        [(oma, 0.95, "Alias: Oma", False), (hans, None, "", True)],
        query="Oma",
    )


@pytest.fixture
def member_client(admin_membership):
    client = Client()
    client.force_login(admin_membership.profile.user)
    return client


@pytest.fixture
def other_client(other_household):
    client = Client()
    client.force_login(build_member(other_household, "dana").profile.user)
    return client


def pick(client, card, contact, *, token=""):
    data = {"contact_id": contact.pk}
    if token:
        data["t"] = token
    return client.post(f"/cards/{card.pk}/pick/", data)


def token_of(card):
    return card_link(card).split("?t=")[1]


# Opening a card


def test_a_signed_link_opens_the_card_without_a_session(client, card):
    response = client.get(card_link(card))

    assert response.status_code == 200
    assert "Gisela Becker" in response.text
    assert response["Content-Language"] == "de"


def test_a_household_member_opens_the_card_without_the_token(member_client, card):
    response = member_client.get(f"/cards/{card.pk}/")

    assert response.status_code == 200


def test_without_session_or_token_the_card_is_not_found(client, card):
    assert client.get(f"/cards/{card.pk}/").status_code == 404


def test_another_households_member_gets_404(other_client, card):
    assert other_client.get(f"/cards/{card.pk}/").status_code == 404


def test_a_removed_member_gets_404(household, card):
    removed = build_member(household, "rita", status="removed")
    client = Client()
    client.force_login(removed.profile.user)

    assert client.get(f"/cards/{card.pk}/").status_code == 404


def test_a_tampered_link_gets_404(client, household, card, oma):
    other_card = picker(household, [(oma, 0.5, "", False)])
    token = token_of(card)

    assert client.get(f"/cards/{card.pk}/?t={token}x").status_code == 404
    assert client.get(f"/cards/{card.pk}/?t=x{token[1:]}").status_code == 404
    assert client.get(f"/cards/{other_card.pk}/?t={token}").status_code == 404


def test_an_expired_link_gets_404(client, card, monkeypatch):
    two_days_ago = time.time() - 2 * 24 * 3600
    with monkeypatch.context() as patch:
        patch.setattr(time, "time", lambda: two_days_ago)
        link = card_link(card)

    assert client.get(link).status_code == 404


def test_a_card_past_its_expiry_opens_for_no_one(client, member_client, card):
    link = card_link(card)
    Card.objects.filter(pk=card.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert client.get(link).status_code == 404
    assert member_client.get(f"/cards/{card.pk}/").status_code == 404


def expired_link(card):
    two_days_ago = time.time() - 2 * 24 * 3600
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: two_days_ago)
        return card_link(card)


def assert_closed_page(response, sentence, *, language):
    assert response.status_code == 404
    assert response["Content-Language"] == language
    assert f'<html lang="{language}">' in response.text
    assert '<meta name="viewport"' in response.text
    assert 'href="/static/yorik/yorik.css' in response.text
    assert sentence in " ".join(response.text.split())
    assert "Content-Security-Policy" in response.headers


def test_an_expired_link_says_so_in_the_households_german(client, card):
    response = client.get(expired_link(card), HTTP_ACCEPT_LANGUAGE="en")

    assert_closed_page(
        response,
        "Dieser Link ist abgelaufen. Frag Yorik noch einmal nach der Karte.",
        language="de",
    )
    # A visitor without a login is shown where members open their cards.
    assert f'href="/accounts/login/?next=%2Fcards%2F{card.pk}%2F"' in response.text
    assert "melde dich an" in response.text


def test_an_expired_link_says_so_in_an_english_households_english(
    client, other_household
):
    dana = build_contact(other_household, "Dana Levi")
    card = picker(other_household, [(dana, 0.8, "", False)])

    response = client.get(expired_link(card), HTTP_ACCEPT_LANGUAGE="de")

    assert_closed_page(
        response,
        "This link has expired. Ask Yorik for the card again.",
        language="en",
    )
    assert "Dana Levi" not in response.text


def test_a_card_past_its_expiry_says_the_link_expired(client, member_client, card):
    link = card_link(card)
    Card.objects.filter(pk=card.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert "Dieser Link ist abgelaufen." in client.get(link).text
    member_page = member_client.get(f"/cards/{card.pk}/")
    assert "Dieser Link ist abgelaufen." in member_page.text
    assert "melde dich an" not in member_page.text


def test_a_tampered_link_says_it_was_changed(client, household, card, oma):
    other_card = picker(household, [(oma, 0.5, "", False)])
    token = token_of(card)

    for link in (
        f"/cards/{card.pk}/?t={token}x",
        f"/cards/{card.pk}/?t={token[:-3]}",
        f"/cards/{other_card.pk}/?t={token}",
    ):
        assert_closed_page(
            client.get(link),
            "Dieser Link ist unvollständig oder wurde verändert.",
            language="de",
        )


def test_an_unknown_card_speaks_the_browsers_language(client, db):
    path = f"/cards/{uuid.uuid4()}/"

    assert_closed_page(
        client.get(path, HTTP_ACCEPT_LANGUAGE="de"),
        "Diese Karte ist nicht verfügbar. Frag Yorik noch einmal",
        language="de",
    )
    assert_closed_page(
        client.get(path, HTTP_ACCEPT_LANGUAGE="en"),
        "This card is not available. Ask Yorik for the card again.",
        language="en",
    )


def test_a_pick_through_an_expired_link_says_so(client, card, oma):
    response = pick(client, card, oma, token=expired_link(card).split("?t=")[1])

    assert_closed_page(response, "Dieser Link ist abgelaufen.", language="de")
    assert not Card.objects.get(pk=card.pk).picked_contact_id


def test_card_pages_forbid_foreign_scripts(client, card):
    response = client.get(card_link(card))

    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "no-store" in response["Cache-Control"]
    assert "<script>" not in response.text


# What a card shows


def test_ranked_card_shows_pills_and_reasons_and_padding_without(client, card):
    response = client.get(card_link(card))

    text = response.text
    assert "<h1>Oma</h1>" in text
    assert text.index("Gisela Becker") < text.index("Hans Becker")
    assert "Alias: Oma" in text
    assert "Sicherheit: </span>sehr sicher" in text
    assert "95\u202f%" not in text
    assert text.count('class="pill ') == 1
    assert "Zuletzt kontaktiert" in text


def test_ranked_card_in_english_for_an_english_household(client, other_household):
    dana = build_contact(other_household, "Dana Levi", relation="Neighbour")
    card = picker(other_household, [(dana, 0.8, "Lives next door", False)])

    response = client.get(card_link(card))

    assert '<html lang="en">' in response.text
    assert "Confidence: </span>likely" in response.text
    assert "80%" not in response.text
    assert "Which contact?" in response.text
    assert "Choose the contact you mean." in response.text


@pytest.mark.parametrize(
    ("confidence", "words", "band"),
    [
        (0.9, "sehr sicher", "very-likely"),
        (0.6, "wahrscheinlich", "likely"),
        (0.59, "vielleicht", "maybe"),
        (0.3, "vielleicht", "maybe"),
        (0.29, "unsicher", "long-shot"),
        (0.0, "unsicher", "long-shot"),
    ],
)
def test_ranked_card_says_its_confidence_in_words_with_a_bar(
    client, household, admin_membership, oma, confidence, words, band
):
    card = picker(household, [(oma, confidence, "", False)])

    text = client.get(card_link(card)).text

    assert f"Sicherheit: </span>{words}</span>" in text
    assert f'class="confidence-bar confidence-{band}" aria-hidden="true"' in text
    assert "\u202f%" not in text


def find_person_card(client, api, query):
    """Return the text of the contact_picker card find_person emits for a query."""
    card = api.call("find_person", {"query": query, "source": "contacts"}).json()
    return client.get(card["card"]["url"].split("testserver", 1)[-1]).text


def test_a_similar_name_card_marks_its_rows_and_asks_did_you_mean(
    client, api, household
):
    build_contact(household, "Hans Becker")
    build_contact(household, "Hans Bäcker")

    text = find_person_card(client, api, "Hans Bekker")

    first = text.split('<span class="row-title">', 1)[1].split("</span>", 1)[0]
    assert first in ("Hans Becker", "Hans Bäcker")
    assert f"<h1>Meintest du {first}?</h1>" in text
    assert f"<title>Meintest du {first}?" in text
    assert "Hans Bekker" not in text
    assert text.count('<span class="badge badge-match">Ähnlicher Name</span>') == 2


def test_a_relation_match_is_marked_and_a_name_match_is_not(client, api, household):
    build_contact(household, "Gisela Becker", relation="Großmutter")
    build_contact(household, "Oma Frieda")
    build_contact(household, "Oma Ruth")

    text = find_person_card(client, api, "Oma")

    def row_of(name):
        return text.split(f">{name}</span>", 1)[1].split("</li>", 1)[0]

    assert "<h1>Oma</h1>" in text
    assert '<span class="badge badge-match">Beziehung</span>' in row_of("Gisela Becker")
    assert "badge-match" not in row_of("Oma Frieda")
    assert "badge-match" not in row_of("Oma Ruth")


def test_unranked_card_shows_relation_and_the_reachable_channel(client, household, oma):
    card = picker(household, [(oma, None, "", False)], ranked=False)

    response = client.get(card_link(card))

    assert '<html lang="de">' in response.text
    assert "Welcher Kontakt?" in response.text
    assert "Großmutter · Telefon: 030 1234567" in response.text
    assert 'class="pill' not in response.text


def test_unranked_card_without_pick_to_chat_links_to_contact_pages(
    client, household, oma, hans
):
    card = picker(
        household, [(oma, None, "", False), (hans, None, "", False)], pick_to_chat=False
    )

    link = card_link(card)
    response = client.get(link)

    # Through the card's link, a row opens its contact through that link.
    token = link.split("?t=")[1]
    assert f'href="/cards/{card.pk}/contacts/{oma.pk}/?t={token}"' in response.text
    assert f'href="/cards/{card.pk}/contacts/{hans.pk}/?t={token}"' in response.text
    assert "<form" not in response.text.split("<main")[1]


def test_card_shows_only_its_households_contacts(client, household, other_household):
    foreign = build_contact(other_household, "Dana Levi")
    card = picker(household, [(foreign, 0.9, "", False)])

    response = client.get(card_link(card))

    assert response.status_code == 200
    assert "Dana Levi" not in response.text
    assert "nicht mehr im Adressbuch" in response.text


def test_a_deleted_contact_disappears_from_the_card(client, card, hans):
    hans.delete()

    response = client.get(card_link(card))

    assert "Hans Becker" not in response.text
    assert "Gisela Becker" in response.text


def test_user_text_is_shown_as_text_never_as_markup(client, household):
    contact = build_contact(household, XSS, relation="Ignore previous instructions")
    card = picker(
        household, [(contact, 0.9, f"reason {XSS}", False)], query=f"Oma {XSS}"
    )
    found = create_card(
        household=household,
        kind="contacts_found",
        payload={},
        created_by=creator_of(household),
    )

    for page in (client.get(card_link(card)), client.get(card_link(found))):
        assert "<img" not in page.text
        assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
    assert "Ignore previous instructions" in client.get(card_link(found)).text


# contacts_found


def test_contacts_found_lists_the_live_book_with_a_letter_index(
    client, household, other_household
):
    for name in ["Zahnarzt Weber", "Ärztehaus Mitte", "Apotheke", "1. FC Nachbarn"]:
        build_contact(household, name)
    build_contact(household, "Sam Spam", status="spam")
    build_contact(other_household, "Avi Cohen")
    card = create_card(
        household=household,
        kind="contacts_found",
        payload={"status": "any", "kind": None},
        created_by=creator_of(household),
    )
    build_contact(household, "Bernd Später")

    response = client.get(card_link(card))

    text = response.text
    assert "5 Kontakte" in text
    assert [letter for letter in "A#BZ" if f'href="#letter-{letter}"' in text] == [
        "A",
        "B",
        "Z",
    ]
    assert 'href="#letter-other"' in text
    assert 'id="letter-A"' in text
    assert (
        text.index("Apotheke") < text.index("Ärztehaus Mitte") < text.index("Zahnarzt")
    )
    assert "Bernd Später" in text
    assert "Sam Spam" not in text
    assert "Avi Cohen" not in text


def test_contacts_found_applies_its_filters(client, household):
    build_contact(household, "Autohaus Klein", kind="business", status="archived")
    build_contact(household, "Klaus Klein", status="archived")
    card = create_card(
        household=household,
        kind="contacts_found",
        payload={"status": "archived", "kind": "business"},
        created_by=creator_of(household),
    )

    text = client.get(card_link(card)).text

    assert "Autohaus Klein" in text
    assert "Klaus Klein" not in text
    assert "Archiviert" in text


# Picking


def test_picking_records_the_pick_and_confirms_it(client, api, card, oma):
    token = token_of(card)

    response = pick(client, card, oma, token=token)

    assert response.status_code == 302
    assert response["Location"] == f"/cards/{card.pk}/?t={token}"
    page = client.get(response["Location"])
    assert "Ausgewählt: Gisela Becker" in page.text
    assert 'name="contact_id"' not in page.text
    answer = api.get(f"/api/cards/{card.pk}/").json()
    assert answer["picked"]["contact_id"] == oma.pk
    assert answer["picked"]["display_name"] == "Gisela Becker"


def test_a_member_picks_with_the_session_alone(member_client, card, hans):
    response = pick(member_client, card, hans)

    assert response.status_code == 302
    card.refresh_from_db()
    assert card.picked_contact == hans


def test_a_pick_from_a_page_shown_before_the_first_is_refused_clearly(
    client, card, oma, hans
):
    token = token_of(card)
    pick(client, card, oma, token=token)

    # Sent from a tab still showing the unanswered card.
    response = pick(client, card, hans, token=token)

    assert response.status_code == 409
    assert "Diese Karte wurde inzwischen beantwortet" in response.text
    assert "Ausgewählt: Gisela Becker" in response.text
    # The page is ready for a new pick, counting the answer it shows.
    assert 'name="answers" value="1"' in response.text
    card.refresh_from_db()
    assert card.picked_contact == oma


@pytest.mark.parametrize("whose", ["not_on_card", "foreign", "garbage"])
def test_only_the_cards_own_rows_can_be_picked(
    client, household, other_household, card, whose
):
    target = {
        "not_on_card": lambda: build_contact(household, "Nicht Dabei").pk,
        "foreign": lambda: build_contact(other_household, "Dana Levi").pk,
        "garbage": lambda: "drop table",
    }[whose]()

    response = client.post(
        f"/cards/{card.pk}/pick/", {"contact_id": target, "t": token_of(card)}
    )

    assert response.status_code == 400
    assert "kann auf dieser Karte nicht ausgewählt werden" in response.text
    card.refresh_from_db()
    assert card.picked_at is None


def test_a_card_without_pick_to_chat_takes_no_pick(client, household, oma):
    card = picker(household, [(oma, None, "", False)], pick_to_chat=False)

    response = pick(client, card, oma, token=token_of(card))

    assert response.status_code == 400
    card.refresh_from_db()
    assert card.picked_at is None


def test_picking_needs_access_to_the_card(client, other_client, card, oma):
    assert pick(client, card, oma).status_code == 404
    assert pick(other_client, card, oma).status_code == 404
    assert pick(client, card, oma, token="bad").status_code == 404
    card.refresh_from_db()
    assert card.picked_at is None


def test_picking_is_protected_against_cross_site_requests(card, oma):
    browser = Client(enforce_csrf_checks=True)
    token = token_of(card)

    forged = pick(browser, card, oma, token=token)
    page = browser.get(card_link(card))
    csrf = page.text.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    genuine = browser.post(
        f"/cards/{card.pk}/pick/",
        {"contact_id": oma.pk, "t": token, "csrfmiddlewaretoken": csrf},
    )

    assert forged.status_code == 403
    assert genuine.status_code == 302


def test_picking_from_contacts_found(client, household, oma):
    card = create_card(
        household=household,
        kind="contacts_found",
        payload={"status": "any", "kind": None},
        created_by=creator_of(household),
    )

    response = pick(client, card, oma, token=token_of(card))

    assert response.status_code == 302
    card.refresh_from_db()
    assert card.picked_contact == oma


def test_a_get_on_the_pick_url_is_not_allowed(client, card):
    assert client.get(f"/cards/{card.pk}/pick/?t={token_of(card)}").status_code == 405


# The card API


def test_the_api_returns_the_card_before_and_after_the_pick(client, api, card, oma):
    before = api.get(f"/api/cards/{card.pk}/")
    pick(client, card, oma, token=token_of(card))
    after = api.get(f"/api/cards/{card.pk}/")

    assert before.status_code == 200
    body = before.json()
    assert set(body) == {
        "id",
        "kind",
        "url",
        "pick_to_chat",
        "query",
        "created_at",
        "expires_at",
        "picked",
    }
    assert body["id"] == str(card.pk)
    assert body["kind"] == "contact_picker"
    assert body["url"].startswith(f"http://testserver/cards/{card.pk}/?t=")
    assert body["pick_to_chat"] is True
    assert body["query"] == "Oma"
    assert body["picked"] is None
    picked = after.json()["picked"]
    assert picked["source"] == "contacts"
    assert picked["id"] == picked["contact_id"] == oma.pk
    assert picked["display_name"] == "Gisela Becker"
    assert picked["picked_at"]


def test_the_api_follows_a_card_emitted_by_a_skill(client, api, household, hans):
    emitted = api.call(
        "list_contacts_for_picking",
        {"ranked_picks": [{"id": hans.pk, "confidence": 0.6, "reason": "Onkel"}]},
    ).json()["card"]
    token = emitted["url"].split("?t=")[1]

    opened = client.get(emitted["url"])
    picked = pick(client, Card.objects.get(pk=emitted["id"]), hans, token=token)

    assert opened.status_code == 200
    assert picked.status_code == 302
    answer = api.get(f"/api/cards/{emitted['id']}/").json()
    assert answer["picked"]["contact_id"] == hans.pk


def test_the_api_hides_other_households_cards(api_as, other_household, card):
    other = api_as(build_member(other_household, "dana"))

    response = other.get(f"/api/cards/{card.pk}/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_api_reads_a_card_for_its_creator_alone(api, api_as, household, card):
    """Another member of the household gets no link: the card might as well not be."""
    colleague = api_as(build_member(household, "ben", role="admin"))

    own = api.get(f"/api/cards/{card.pk}/")
    theirs = colleague.get(f"/api/cards/{card.pk}/")

    assert own.status_code == 200
    assert theirs.status_code == 404
    assert theirs.json() == colleague.get(f"/api/cards/{uuid.uuid4()}/").json()


def test_a_card_link_opens_nothing_once_its_creator_is_offboarded(
    client, admin_membership, card
):
    admin_membership.status = "paused"
    admin_membership.save()

    assert client.get(card_link(card)).status_code == 404


def test_the_api_needs_a_token(client, card):
    response = client.get(f"/api/cards/{card.pk}/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_the_api_leaves_out_query_on_cards_without_one(api, household):
    card = create_card(
        household=household,
        kind="contacts_found",
        payload={},
        created_by=creator_of(household),
    )

    assert "query" not in api.get(f"/api/cards/{card.pk}/").json()


def test_openapi_documents_the_card_endpoint(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    operation = schema["paths"]["/api/cards/{card_id}/"]["get"]
    assert operation["operationId"] == "get_card"
    assert "404" in operation["responses"]


@pytest.fixture
def link_rate(settings):
    settings.YORIK_CARD_LINK_RATE = "3/hour"


def test_link_visits_from_one_address_are_limited(link_rate, card):
    visitor = Client(REMOTE_ADDR="203.0.113.7")
    statuses = [visitor.get(card_link(card)).status_code for _ in range(3)]

    refused = visitor.get(card_link(card))

    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    # In the card's household's German, whatever the browser asks for.
    assert "Zu viele Anfragen" in refused.text
    assert refused["Content-Language"] == "de"
    assert "Gisela Becker" not in refused.text
    assert refused["Cache-Control"].startswith("max-age=0")
    assert "default-src 'self'" in refused["Content-Security-Policy"]


def test_picks_through_a_link_count_against_the_same_limit(link_rate, card, oma):
    visitor = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        visitor.get(card_link(card))
    token = card_link(card).split("t=", 1)[1]

    response = visitor.post(
        f"/cards/{card.pk}/pick/", {"contact_id": oma.pk, "t": token}
    )

    assert response.status_code == 429
    card.refresh_from_db()
    assert card.picked_contact is None


def test_another_address_and_logged_in_members_are_not_limited(
    link_rate, card, household
):
    for _ in range(4):
        Client(REMOTE_ADDR="203.0.113.7").get(card_link(card))
    member = Client(REMOTE_ADDR="203.0.113.7")
    member.force_login(build_member(household, "jonas").profile.user)

    other = Client(REMOTE_ADDR="198.51.100.9").get(card_link(card))
    own = [member.get(card.get_absolute_url()).status_code for _ in range(4)]

    assert other.status_code == 200
    assert own == [200] * 4


def test_the_limit_page_speaks_german(link_rate, card):
    visitor = Client(REMOTE_ADDR="203.0.113.7", HTTP_ACCEPT_LANGUAGE="de")
    for _ in range(3):
        visitor.get(card_link(card))

    refused = visitor.get(card_link(card))

    assert refused.status_code == 429
    assert "Zu viele Anfragen" in refused.text


def test_delete_expired_cards_keeps_live_ones(household, oma, hans):
    live = picker(household, [(oma, 0.9, "", False)])
    expired = [picker(household, [(hans, 0.5, "", False)]) for _ in range(2)]
    Card.objects.filter(pk__in=[c.pk for c in expired]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    out = io.StringIO()

    call_command("delete_expired_cards", stdout=out)

    assert out.getvalue().strip() == "Deleted 2 expired card(s)."
    assert list(Card.objects.values_list("pk", flat=True)) == [live.pk]
    assert Client().get(card_link(live)).status_code == 200
