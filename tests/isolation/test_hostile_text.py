"""Names of HTML, script and prompt-injection text: verbatim JSON, escaped pages."""

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from tests.isolation.world import CARD_KINDS, HOSTILE, HOSTILE_WORD, World
from yorik.cards import card_link
from yorik.registry import all_skills

pytestmark = pytest.mark.django_db

Inputs = Callable[[World], list[tuple[dict[str, Any], tuple[str, ...]]]]
# Per skill: calls as A's admin and the hostile strings each answer must hold
# verbatim. A registered skill without an entry fails the completeness test.
HOSTILE_CALLS: dict[str, Inputs] = {
    "find_person": lambda world: [
        ({"query": HOSTILE_WORD}, HOSTILE),
        ({"query": HOSTILE_WORD, "source": "household"}, HOSTILE),
        ({"query": HOSTILE_WORD, "source": "contacts"}, HOSTILE),
    ],
    "list_contacts_for_picking": lambda world: [
        ({}, HOSTILE),
        ({"defer_card": True, "kind": "person"}, HOSTILE),
    ],
    "people_search": lambda world: [({"query": HOSTILE_WORD}, HOSTILE)],
    "search_anything": lambda world: [({"query": HOSTILE_WORD}, HOSTILE)],
    "find_known_provider": lambda world: [({"category": "Zahnarzt"}, HOSTILE[:1])],
    "remember_relation": lambda world: [
        ({"contact_id": contact.pk, "word": HOSTILE_WORD}, (contact.display_name,))
        for contact in world.a.hostile_contacts
    ],
    "compose_check_recipient": lambda world: [
        (
            {"contact_id": contact.pk, "template_id": world.a.template.template_id},
            (contact.display_name,),
        )
        for contact in world.a.hostile_contacts
    ],
}


def strings_in(value: Any) -> Iterator[str]:
    """Yield every string value of decoded JSON, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def test_every_skill_has_hostile_calls():
    skills = {skill.name for skill in all_skills()}

    assert skills <= set(HOSTILE_CALLS), (
        f"Add the calls that show names to HOSTILE_CALLS for "
        f"{sorted(skills - set(HOSTILE_CALLS))}."
    )


@pytest.mark.parametrize("skill_name", sorted(HOSTILE_CALLS))
def test_skills_answer_hostile_names_verbatim_as_json_strings(world, a_api, skill_name):
    for inputs, expected in HOSTILE_CALLS[skill_name](world):
        response = a_api.call(skill_name, inputs)

        assert response.status_code == 200, response.content
        assert response["Content-Type"] == "application/json"
        strings = set(strings_in(response.json()))
        for name in expected:
            assert name in strings, (inputs, name)


def test_the_direct_lane_answers_hostile_names_verbatim(world, a_api):
    response = a_api.post(
        "/api/agent/turns/", {"message": "fiesling.lead0@arndt.example"}
    )

    assert response.json()["result"]["items"][0]["name"] == HOSTILE[0]


def test_the_card_api_answers_hostile_query_and_pick_verbatim(world, a_api):
    card = world.a.cards["contact_picker_ranked"]
    picked = world.a.hostile_contacts[3]
    Client().post(
        f"/cards/{card.pk}/pick/",
        {"contact_id": picked.pk, "t": card_link(card).split("?t=")[1]},
    )

    body = a_api.get(f"/api/cards/{card.pk}/").json()

    assert body["query"] == HOSTILE[1]
    assert body["picked"]["display_name"] == HOSTILE[3]


def assert_escaped(page: str, names: tuple[str, ...] = HOSTILE) -> None:
    """The page shows each name as text and none of them as markup."""
    assert "<img src=x" not in page
    assert "<script>alert" not in page
    assert "&lt;img" in page or HOSTILE[0] not in names
    for name in names:
        assert escape(name) in page, name


@pytest.mark.parametrize("kind", CARD_KINDS)
def test_card_pages_escape_hostile_names(world, kind):
    response = Client().get(card_link(world.a.cards[kind]))

    assert response.status_code == 200
    assert_escaped(response.content.decode())
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_picked_card_escapes_the_picked_name(world):
    card = world.a.cards["contact_picker_ranked"]
    link = card_link(card)
    token = link.split("?t=")[1]

    response = Client().post(
        f"/cards/{card.pk}/pick/",
        {"contact_id": world.a.hostile_contacts[0].pk, "t": token},
        follow=True,
    )

    assert response.status_code == 200
    assert_escaped(response.content.decode())


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_query_is_escaped_on_the_people_card(a_api, name):
    card = a_api.call("people_search", {"query": name}).json()["card"]

    response = Client().get(card["url"])

    assert_escaped(response.content.decode(), (name,))


def a_pages(world: World) -> dict[str, str]:
    pages = {
        "contact list": "/contacts/",
        "contact search": f"/contacts/?q={HOSTILE_WORD}",
        "contact search for markup": f"/contacts/?q={quote(HOSTILE[0])}",
        "login with a hostile next": f"/accounts/login/?next={quote(HOSTILE[1])}",
        # A bad token falls back to the session; the page repeats the token.
        "card with a hostile token": (
            f"/cards/{world.a.cards['contacts_found'].pk}/?t={quote(HOSTILE[1])}"
        ),
        "leads": "/de/dashboard/leads",
        "leads in English": "/en/dashboard/leads",
    }
    for index, contact in enumerate(world.a.hostile_contacts):
        pages[f"contact {index}"] = f"/contacts/{contact.pk}/"
    for index, member in enumerate(world.a.hostile_members):
        pages[f"member {index}"] = f"/de/dashboard/members/{member.pk}"
    return pages


PAGE_NAMES = {
    "contact list": HOSTILE,
    "contact search": HOSTILE,
    "contact search for markup": HOSTILE[:1],
    "login with a hostile next": HOSTILE[1:2],
    "card with a hostile token": HOSTILE,
    "leads": HOSTILE,
    "leads in English": HOSTILE,
    **{f"contact {index}": (name,) for index, name in enumerate(HOSTILE)},
    **{f"member {index}": (name,) for index, name in enumerate(HOSTILE)},
}


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_pages_escape_hostile_names(world, browser_of, page):
    browser = browser_of(world.a.admin)

    response = browser.get(a_pages(world)[page])

    assert response.status_code == 200
    assert_escaped(response.content.decode(), PAGE_NAMES[page])
    # Had anything slipped through, no inline script would run.
    assert "script-src 'self'" in response["Content-Security-Policy"]


@pytest.mark.parametrize(
    "model", ["contacts_contact", "household_lead", "household_userprofile"]
)
def test_admin_lists_escape_hostile_names(world, browser_of, model):
    browser = browser_of(world.a.admin)

    response = browser.get(reverse(f"admin:{model}_changelist"))

    assert_escaped(response.content.decode())
