"""A's callers use B's ids, phones, emails and names on the agent API: nothing of B.

Every probe also runs as B's admin, the control that shows it would find B's
data if the household filter were missing.
"""

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from household.models import Conversation, ModelUsage
from people_search.index import similar
from people_search.index.models import Subject
from tests.isolation.world import (
    B_EMAILS,
    B_PHONES,
    B_SURNAME,
    CARD_KINDS,
    MARKER,
    ROLES,
    TIER_OF_ROLE,
    Side,
    World,
    shows_b,
)
from yorik.registry import get_skill

pytestmark = pytest.mark.django_db

# Skill inputs that find rows of B and nothing of A.
PROBES: dict[str, tuple[str, dict[str, Any]]] = {
    "find_person by B's surname": ("find_person", {"query": B_SURNAME}),
    "find_person household by B's surname": (
        "find_person",
        {"query": B_SURNAME, "source": "household"},
    ),
    "find_person by B's contact phone": (
        "find_person",
        {"query": B_PHONES["contact"], "source": "contacts"},
    ),
    "find_person by B's member phone": (
        "find_person",
        {"query": B_PHONES["member"], "source": "household"},
    ),
    "find_person by B's email": ("find_person", {"query": B_EMAILS["contact"]}),
    "find_person of B's active contacts": (
        "find_person",
        {"query": B_SURNAME, "source": "contacts", "status": "active"},
    ),
    "find_person by B's phone channel": (
        "find_person",
        {"channel_kind": "phone", "channel_value": B_PHONES["contact"]},
    ),
    "find_person by B's email channel": (
        "find_person",
        {"channel_kind": "email", "channel_value": B_EMAILS["contact"]},
    ),
    "find_person by B's chat id": (
        "find_person",
        {"channel_kind": "whatsapp", "channel_value": f"{MARKER}@s.whatsapp.net"},
    ),
    "people_search by B's surname": ("people_search", {"query": B_SURNAME}),
    "people_search by a misspelt B surname": ("people_search", {"query": "Quornwal"}),
    "people_search by B's member phone": (
        "people_search",
        {"query": B_PHONES["member"]},
    ),
    "people_search by B's lead phone": ("people_search", {"query": B_PHONES["lead"]}),
    "people_search by B's lead email": ("people_search", {"query": B_EMAILS["lead"]}),
    "people_search by B's partial phone": ("people_search", {"query": "999 8877"}),
    "search_anything by B's surname": ("search_anything", {"query": B_SURNAME}),
    "search_anything by the marker": ("search_anything", {"query": MARKER}),
    "search_anything by B's contact email": (
        "search_anything",
        {"query": B_EMAILS["contact"], "scopes": ["contacts"]},
    ),
    "find_known_provider for B's garage": (
        "find_known_provider",
        {"category": "garage"},
    ),
}
# The callers: every role of A, and B's admin as the control.
CALLERS = [
    pytest.param(side, role, id=f"{side}-{role}")
    for side, role in [*(("a", role) for role in ROLES), ("b", "admin")]
]


def found(body: dict[str, Any]) -> tuple[list, int]:
    """Return the rows a skill answered with and the count it reported."""
    if "results" in body:
        return body["results"], body["count"]
    if "items" in body:
        return body["items"], body["totalCount"]
    return body["candidates"], sum(body["source_counts"].values())


@pytest.mark.parametrize(("side", "role"), CALLERS)
@pytest.mark.parametrize("probe", PROBES)
def test_queries_for_bs_data_find_nothing(api_of, probe, side, role):
    skill_name, inputs = PROBES[probe]

    response = api_of(side, role).call(skill_name, inputs)

    assert response.status_code == 200, response.content
    rows, count = found(response.json())
    text = response.content.decode()
    if side == "b":
        assert rows, "The probe finds nothing even in B: fix the probe."
        assert count
        assert shows_b(text)
    else:
        assert rows == []
        assert count == 0
        assert not shows_b(text)


@pytest.mark.parametrize("role", ROLES)
def test_providers_are_counted_from_the_callers_household_only(api_of, role):
    """B has a dentist in every source too; none of them is counted for A."""
    response = api_of("a", role).call("find_known_provider", {"category": "dentist"})

    assert response.json()["source_counts"] == {
        "contacts": 1,
        "paperless": 1,
        "calendar": 1,
    }
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize("role", ROLES)
def test_browsing_lists_only_own_contacts(world, api_of, role):
    response = api_of("a", role).call("list_contacts_for_picking", {})

    body = response.json()
    assert {row["id"] for row in body["contacts"]} == {c.pk for c in world.a.contacts}
    assert body["count"] == len(world.a.contacts)
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize("role", ROLES)
def test_ranked_picks_of_bs_contacts_are_dropped_never_rendered(world, api_of, role):
    b_ids = [contact.pk for contact in world.b.contacts]
    own = world.a.contact.pk
    picks = [{"id": pk, "confidence": 0.9, "reason": "x"} for pk in [*b_ids, own]]

    response = api_of("a", role).call(
        "list_contacts_for_picking", {"query": "Saba", "ranked_picks": picks}
    )

    body = response.json()
    assert sorted(body["dropped"]) == sorted(b_ids)
    assert body["rendered"] == 1
    page = Client().get(body["card"]["url"])
    assert page.status_code == 200
    assert world.a.contact.display_name in page.text
    assert not shows_b(page.text)


def recipient_cases(world: World) -> dict[str, dict[str, Any]]:
    return {
        "B's contact, A's template": {
            "contact_id": world.b.contact.pk,
            "template_id": world.a.template.template_id,
        },
        "A's contact, B's template": {
            "contact_id": world.a.contact.pk,
            "template_id": world.b.template.template_id,
        },
        "B's contact and template": {
            "contact_id": world.b.contact.pk,
            "template_id": world.b.template.template_id,
        },
    }


@pytest.mark.parametrize(
    "case",
    [
        "B's contact, A's template",
        "A's contact, B's template",
        "B's contact and template",
    ],
)
@pytest.mark.parametrize("role", ROLES)
def test_recipient_check_of_bs_rows_is_404(world, api_of, role, case):
    permitted = TIER_OF_ROLE[role] in get_skill("compose_check_recipient").permissions

    response = api_of("a", role).call(
        "compose_check_recipient", recipient_cases(world)[case]
    )

    assert response.status_code == (404 if permitted else 403)
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize("kind", CARD_KINDS)
@pytest.mark.parametrize("role", ROLES)
def test_bs_cards_are_404_on_the_card_api(world, api_of, role, kind):
    response = api_of("a", role).get(f"/api/cards/{world.b.cards[kind].pk}/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize("kind", CARD_KINDS)
@pytest.mark.parametrize("role", [role for role in ROLES if role != "admin"])
def test_another_members_card_answers_as_a_missing_one(world, api_of, role, kind):
    """A's admin emitted every card: no other member reads it or gets its link."""
    reader = api_of("a", role)

    response = reader.get(f"/api/cards/{world.a.cards[kind].pk}/")
    missing = reader.get(f"/api/cards/{uuid.uuid4()}/")

    assert response.status_code == 404
    assert response.json() == missing.json()
    assert "?t=" not in response.content.decode()


def test_the_card_api_reads_own_cards(world, api_of):
    """The control: A's admin reads the card they emitted, B's admin B's pick."""
    own = api_of("a", "admin").get(f"/api/cards/{world.a.cards['people'].pk}/")
    b_card = world.b.cards["contact_picker_ranked"]
    theirs = api_of("b", "admin").get(f"/api/cards/{b_card.pk}/")

    assert own.status_code == 200
    assert "?t=" in own.json()["url"]
    assert theirs.json()["picked"]["contact_id"] == world.b.contact.pk


Body = Callable[[World], dict[str, Any]]
AGENT_CALLS: dict[str, tuple[str, Body]] = {
    "turn": (
        "/api/agent/turns/",
        lambda world: {"conversation_id": world.b.conversation.pk, "message": "Hi"},
    ),
    "usage": (
        "/api/agent/usage/",
        lambda world: {"conversation_id": world.b.conversation.pk, "tokens": 10},
    ),
}


@pytest.mark.parametrize("call", AGENT_CALLS)
@pytest.mark.parametrize("role", ROLES)
def test_bs_conversation_is_404_on_the_agent_api(world, api_of, role, call):
    path, body = AGENT_CALLS[call]

    response = api_of("a", role).post(path, body(world))

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    conversation = Conversation.objects.get(pk=world.b.conversation.pk)
    assert conversation.turn_count == 0
    assert not ModelUsage.objects.filter(conversation=conversation).exists()


@pytest.mark.parametrize("call", AGENT_CALLS)
def test_another_members_conversation_is_404_too(world, api_of, call):
    path, body = AGENT_CALLS[call]
    own_household = body(world) | {"conversation_id": world.a.conversation.pk}

    response = api_of("a", "member").post(path, own_household)

    assert response.status_code == 404


@pytest.mark.parametrize(
    "message", [B_EMAILS["lead"], B_EMAILS["member"], B_PHONES["lead"]]
)
def test_the_direct_lane_finds_nothing_of_b(api_of, message):
    response = api_of("a", "admin").post("/api/agent/turns/", {"message": message})

    body = response.json()
    assert body["lane"] == "direct"
    assert body["result"] == {"items": [], "totalCount": 0}
    # The page repeats the message, so it is read for its rows, not the marker.
    page = Client().get(body["card"]["url"])
    assert "Niemand passt dazu." in page.text
    assert 'class="row"' not in page.text


@pytest.mark.parametrize("exact_scan", [True, False], ids=["exact", "vector index"])
def test_similar_names_come_from_the_callers_household_only(
    world, monkeypatch, exact_scan
):
    """Both ways similar names are looked up, the exact scan and the HNSW index."""
    if not exact_scan:
        monkeypatch.setattr(similar, "EXACT_SCAN_BELOW", 0)

    def find(side: Side) -> list[similar.SimilarName]:
        return similar.find_similar_names(
            household_id=side.household.pk, name="Quornwal", subjects=Subject.values
        )

    assert find(world.b), "The control finds B's similar names."
    assert find(world.a) == []
