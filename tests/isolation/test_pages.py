"""A's people open B's cards, contacts and dashboard pages: 404 or nothing of B."""

import re

import pytest
from django.test import Client

from people_search.models import PersonalWord
from tests.isolation.world import (
    B_PHONES,
    B_SURNAME,
    CARD_KINDS,
    INACTIVE_STATUSES,
    LOGIN_ROLES,
    World,
    shows_b,
)
from yorik.cards import card_link
from yorik.models import Card

pytestmark = pytest.mark.django_db


def token_of(card: Card) -> str:
    return card_link(card).split("?t=")[1]


@pytest.fixture(params=LOGIN_ROLES)
def a_browser(request, world, browser_of) -> Client:
    """A browser logged in as A's member of each role with a login."""
    return browser_of(world.a.members[request.param])


def assert_not_found(response) -> None:
    assert response.status_code == 404
    assert not shows_b(response.content.decode())


# Cards


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_bs_card_page_is_404_for_as_session(world, a_browser, kind):
    assert_not_found(a_browser.get(f"/cards/{world.b.cards[kind].pk}/"))


def tampered_links(world: World, kind: str) -> dict[str, str]:
    card = world.b.cards[kind]
    token = token_of(card)
    signed_for_a = token_of(world.a.cards[kind])
    return {
        "appended": f"/cards/{card.pk}/?t={token}x",
        "first character": f"/cards/{card.pk}/?t=x{token[1:]}",
        "signature cut": f"/cards/{card.pk}/?t={token.rsplit(':', 1)[0]}",
        "A's token on B's card": f"/cards/{card.pk}/?t={signed_for_a}",
        "B's value, A's signature": f"/cards/{card.pk}/?t={card.pk}:"
        + signed_for_a.split(":", 1)[1],
    }


@pytest.mark.parametrize(
    "tamper",
    [
        "appended",
        "first character",
        "signature cut",
        "A's token on B's card",
        "B's value, A's signature",
    ],
)
@pytest.mark.parametrize("kind", CARD_KINDS)
def test_a_tampered_link_of_bs_card_is_404(world, browser_of, kind, tamper):
    """With A's admin logged in, the most a session could add to a link."""
    browser = browser_of(world.a.admin)

    assert_not_found(browser.get(tampered_links(world, kind)[tamper]))


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_bs_card_cannot_be_picked_from_as_session(world, a_browser, kind):
    card = world.b.cards[kind]
    before = Card.objects.values("picked_contact", "picked_at").get(pk=card.pk)

    response = a_browser.post(
        f"/cards/{card.pk}/pick/", {"contact_id": world.b.contact.pk}
    )

    assert_not_found(response)
    assert Card.objects.values("picked_contact", "picked_at").get(pk=card.pk) == before


def test_as_card_refuses_a_pick_of_bs_contact(world, a_browser):
    card = world.a.cards["contact_picker"]

    response = a_browser.post(
        f"/cards/{card.pk}/pick/", {"contact_id": world.b.contact.pk}
    )

    assert response.status_code == 400
    assert not shows_b(response.content.decode())
    assert Card.objects.get(pk=card.pk).picked_contact is None


def test_as_card_through_its_link_refuses_a_pick_of_bs_contact(world):
    card = world.a.cards["contact_picker_ranked"]

    response = Client().post(
        f"/cards/{card.pk}/pick/",
        {"contact_id": world.b.contact.pk, "t": token_of(card)},
    )

    assert response.status_code == 400
    assert Card.objects.get(pk=card.pk).picked_contact is None


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_cards_need_a_session_or_link(world, kind):
    card = world.a.cards[kind]

    assert Client().get(f"/cards/{card.pk}/").status_code == 404
    assert Client().post(f"/cards/{card.pk}/pick/", {"contact_id": 1}).status_code == (
        404
    )


# A card's contact pages


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_as_card_link_opens_none_of_bs_contacts(world, kind):
    card = world.a.cards[kind]
    for contact in world.b.contacts:
        assert_not_found(
            Client().get(f"/cards/{card.pk}/contacts/{contact.pk}/?t={token_of(card)}")
        )


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_bs_card_opens_no_contact_for_as_session_or_a_tampered_link(
    world, a_browser, kind
):
    card = world.b.cards[kind]
    contact = world.b.contact
    token = token_of(card)

    assert_not_found(a_browser.get(f"/cards/{card.pk}/contacts/{contact.pk}/"))
    assert_not_found(
        Client().get(f"/cards/{card.pk}/contacts/{contact.pk}/?t={token}x")
    )
    assert_not_found(Client().get(f"/cards/{card.pk}/contacts/{contact.pk}/"))


def test_a_card_contact_link_of_an_offboarded_creator_opens_nothing(world):
    for kind, card in world.a.dead_cards.items():
        for contact in world.a.contacts:
            response = Client().get(
                f"/cards/{card.pk}/contacts/{contact.pk}/?t={token_of(card)}"
            )
            assert response.status_code == 404, kind


# Contact pages


def test_bs_contacts_are_404(world, a_browser):
    for contact in world.b.contacts:
        assert_not_found(a_browser.get(f"/contacts/{contact.pk}/"))


@pytest.mark.parametrize(
    "query", [B_SURNAME, B_PHONES["contact"], "Quornwal", "zzb-secret", ""]
)
def test_contact_list_shows_nothing_of_b(world, a_browser, query):
    response = a_browser.get("/contacts/", {"q": query, "status": "any"})

    assert response.status_code == 200
    page = response.content.decode()
    expected = len(world.a.contacts) if not query else 0
    assert f"{expected} Kontakte" in page
    # The search box repeats the query; the rows must not.
    assert not shows_b(page.replace('value="zzb-secret"', ""))


@pytest.mark.parametrize("status", ["active", "pending", "spam", "archived"])
def test_every_status_filter_stays_in_the_household(a_browser, status):
    response = a_browser.get("/contacts/", {"status": status})

    assert not shows_b(response.content.decode())


# Dashboard pages


@pytest.mark.parametrize("lang", ["de", "en"])
def test_bs_members_are_404_on_the_dashboard(world, a_browser, lang):
    for membership in world.b.members.values():
        assert_not_found(a_browser.get(f"/{lang}/dashboard/members/{membership.pk}"))


@pytest.mark.parametrize("lang", ["de", "en"])
def test_leads_page_never_lists_or_highlights_bs_lead(world, a_browser, lang):
    lead = world.b.leads[0]

    response = a_browser.get(f"/{lang}/dashboard/leads", {"lead": lead.pk})

    assert response.status_code == 200
    page = response.content.decode()
    assert not shows_b(page)
    assert f'id="lead-{lead.pk}"' not in page
    assert 'aria-current="true"' not in page


def test_the_dashboard_shows_own_members(world, a_browser):
    """The control: A's own member page opens."""
    member = world.a.members["member"]

    assert a_browser.get(f"/de/dashboard/members/{member.pk}").status_code == 200


# Visitors without a live membership


PAGES = {
    "contact list": lambda world: "/contacts/",
    "contact": lambda world: f"/contacts/{world.a.contact.pk}/",
    "member": lambda world: f"/de/dashboard/members/{world.a.admin.pk}",
    "leads": lambda world: "/de/dashboard/leads",
    "card": lambda world: f"/cards/{world.a.cards['contacts_found'].pk}/",
    "my words": lambda world: "/de/dashboard/words",
}


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_visitors_are_sent_to_log_in_or_get_404(world, client, page):
    response = client.get(PAGES[page](world))

    if page == "card":
        assert response.status_code == 404
    else:
        assert response.status_code == 302
        assert response.url.startswith("/accounts/login/")


DEAD_LOGINS = [
    "removed membership",
    "deleted profile",
    *(f"{status} admin" for status in INACTIVE_STATUSES),
]


@pytest.mark.parametrize("dead", DEAD_LOGINS)
@pytest.mark.parametrize("page", PAGES)
def test_logins_without_an_acting_membership_see_nothing(world, browser_of, page, dead):
    browser = browser_of(world.a.dead_members[dead])

    response = browser.get(PAGES[page](world))

    assert response.status_code in {403, 404}
    assert world.a.contact.display_name not in response.content.decode()


@pytest.mark.parametrize("dead", DEAD_LOGINS)
@pytest.mark.parametrize("kind", CARD_KINDS)
def test_logins_without_an_acting_membership_cannot_pick(world, browser_of, kind, dead):
    card = world.a.cards[kind]
    before = Card.objects.values("picked_contact", "picked_at").get(pk=card.pk)

    response = browser_of(world.a.dead_members[dead]).post(
        f"/cards/{card.pk}/pick/", {"contact_id": world.a.contact.pk}
    )

    assert response.status_code == 404
    assert Card.objects.values("picked_contact", "picked_at").get(pk=card.pk) == before


@pytest.mark.parametrize("status", INACTIVE_STATUSES)
def test_an_offboarded_members_card_links_open_nothing(world, status):
    """A link lends its creator's rights, so it dies with their membership."""
    card = world.a.dead_cards[status]
    token = token_of(card)

    page = Client().get(f"/cards/{card.pk}/", {"t": token})
    pick = Client().post(
        f"/cards/{card.pk}/pick/", {"contact_id": world.a.contact.pk, "t": token}
    )

    assert page.status_code == 404
    assert world.a.contact.display_name not in page.content.decode()
    assert pick.status_code == 404
    assert Card.objects.get(pk=card.pk).picked_contact is None


def test_an_active_members_card_link_opens(world):
    """The control: the admin's card of the whole book opens through its link."""
    card = world.a.cards["contacts_found"]

    response = Client().get(f"/cards/{card.pk}/", {"t": token_of(card)})

    assert response.status_code == 200
    assert world.a.contact.display_name in response.content.decode()


# Cards through the rights of whoever reads them


def lead_rows(response) -> set[int]:
    """Return the ids of the leads a people_results page links to."""
    page = response.content.decode()
    # A visitor's row asks for a login first, naming the page in `for`.
    return {
        int(pk)
        for pk in re.findall(
            r"dashboard(?:/|%2F)leads(?:\?|%3F)lead(?:=|%3D)(\d+)", page
        )
    }


def card_leads(card: Card) -> set[int]:
    return {hit["lead_id"] for hit in card.payload["leads"]}


def test_a_people_card_through_its_link_shows_what_its_creator_may_see(world):
    """A's admin (lead access all) emitted it: a visitor sees every lead on it."""
    card = world.a.cards["people"]

    response = Client().get(f"/cards/{card.pk}/", {"t": token_of(card)})

    assert card_leads(card)
    assert lead_rows(response) == card_leads(card)


@pytest.mark.parametrize("role", LOGIN_ROLES)
def test_a_logged_in_member_sees_a_people_card_by_their_own_lead_access(
    world, browser_of, role
):
    """Opened with the creator's link, leads still follow the reader's rights."""
    card = world.a.cards["people"]
    reader = world.a.members[role]
    visible = {
        "all": card_leads(card),
        "own": {lead.pk for lead in world.a.leads if lead.owner_id == reader.pk},
        "none": set(),
    }[reader.lead_access]

    response = browser_of(reader).get(f"/cards/{card.pk}/", {"t": token_of(card)})

    assert response.status_code == 200
    assert lead_rows(response) == visible & card_leads(card)


@pytest.mark.parametrize(
    "path", ["/contacts/", "/en/dashboard/leads", "/de/dashboard/leads"]
)
def test_personal_pages_are_never_cached(world, a_browser, path):
    response = a_browser.get(path)

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]


# A member's own words


def b_words(world: World) -> list[PersonalWord]:
    return list(PersonalWord.objects.filter(household=world.b.household))


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_words_page_shows_nothing_of_b_and_deletes_none_of_bs_words(
    world, a_browser, lang
):
    words = b_words(world)
    assert words, "B's picked card teaches B's admin a word: fix the world."

    page = a_browser.get(f"/{lang}/dashboard/words")
    for word in words:
        a_browser.post(f"/{lang}/dashboard/words", {"word_id": word.pk})

    assert page.status_code == 200
    assert not shows_b(page.content.decode())
    assert b_words(world) == words


def test_a_members_words_page_lists_only_their_own(world, browser_of):
    """A's member sees none of A's admin's words either."""
    admin, member = world.a.admin, world.a.members["member"]
    PersonalWord.objects.create(
        household=world.a.household,
        member=admin,
        kind="relation",
        word="Chefin",
        phrase="chefin",
        contact=world.a.contact,
    )

    assert "Chefin" in browser_of(admin).get("/en/dashboard/words").content.decode()
    assert (
        "Chefin" not in browser_of(member).get("/en/dashboard/words").content.decode()
    )


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_bs_card_lesson_cannot_be_undone_from_as_session(world, a_browser, kind):
    words = b_words(world)

    response = a_browser.post(f"/cards/{world.b.cards[kind].pk}/forget/")

    assert_not_found(response)
    assert b_words(world) == words


@pytest.mark.parametrize("dead", DEAD_LOGINS)
def test_logins_without_an_acting_membership_cannot_undo_a_lesson(
    world, browser_of, dead
):
    words = b_words(world)
    card = world.b.cards["contact_picker_ranked"]

    anonymous = Client().post(f"/cards/{card.pk}/forget/")
    tampered = Client().post(
        f"/cards/{card.pk}/forget/",
        {"t": token_of(world.a.cards["contact_picker_ranked"])},
    )
    dead_login = browser_of(world.a.dead_members[dead]).post(
        f"/cards/{card.pk}/forget/"
    )

    for response in (anonymous, tampered, dead_login):
        assert_not_found(response)
    assert b_words(world) == words
