"""Tiers and skills: every role of both households calls exactly its tier's skills."""

from collections.abc import Callable
from typing import Any

import pytest

from tests.isolation.world import ROLES, TIER_OF_ROLE, Side, shows_b
from yorik.registry import all_skills, get_skill

pytestmark = pytest.mark.django_db

# The smallest inputs each skill accepts, from the caller's own household. A
# skill registered without an entry fails test_every_skill_has_minimal_inputs.
MINIMAL_INPUTS: dict[str, Callable[[Side], dict[str, Any]]] = {
    "compose_check_recipient": lambda side: {
        "contact_id": side.contact.pk,
        "template_id": side.template.template_id,
    },
    "find_known_provider": lambda side: {"category": "dentist"},
    "find_person": lambda side: {"query": side.contact.first_name},
    "list_contacts_for_picking": lambda side: {},
    "people_search": lambda side: {"query": "Dana"},
    "remember_relation": lambda side: {"contact_id": side.contact.pk, "word": "Oma"},
    "search_anything": lambda side: {"query": "Dana"},
}
SKILLS = [skill.name for skill in all_skills()]
SIDES = ["a", "b"]


def allowed(role: str, skill_name: str) -> bool:
    return TIER_OF_ROLE[role] in get_skill(skill_name).permissions


def tier_skills(role: str) -> set[str]:
    return {name for name in SKILLS if allowed(role, name)}


def test_every_skill_has_minimal_inputs():
    missing = sorted(set(SKILLS) - set(MINIMAL_INPUTS))
    stale = sorted(set(MINIMAL_INPUTS) - set(SKILLS))

    assert not missing, f"Add minimal inputs to MINIMAL_INPUTS for {missing}."
    assert not stale, f"MINIMAL_INPUTS names skills that are gone: {stale}."


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("role", ROLES)
def test_each_role_has_its_designed_tier(world, side, role):
    assert getattr(world, side).members[role].tier == TIER_OF_ROLE[role]


@pytest.mark.parametrize("skill_name", SKILLS)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_call_is_allowed_exactly_for_the_manifests_tiers(
    world, api_of, side, role, skill_name
):
    inputs = MINIMAL_INPUTS[skill_name](getattr(world, side))

    response = api_of(side, role).call(skill_name, inputs)

    if allowed(role, skill_name):
        assert response.status_code == 200, response.content
    else:
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "forbidden"
    if side == "a":
        assert not shows_b(response.content.decode())


@pytest.mark.parametrize("skill_name", SKILLS)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_manifest_is_readable_exactly_for_the_manifests_tiers(
    api_of, side, role, skill_name
):
    response = api_of(side, role).get(f"/api/skills/{skill_name}/")

    if allowed(role, skill_name):
        assert response.status_code == 200
        assert TIER_OF_ROLE[role] in response.json()["permissions"]
    else:
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_skill_list_holds_exactly_the_tiers_skills(api_of, side, role):
    response = api_of(side, role).get("/api/skills/")

    assert response.status_code == 200
    manifests = response.json()["skills"]
    assert {m["name"] for m in manifests} == tier_skills(role)
    assert all(TIER_OF_ROLE[role] in m["permissions"] for m in manifests)


@pytest.mark.parametrize("flavor", ["openai", "anthropic"])
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_tools_are_exactly_the_tiers_skills(api_of, side, role, flavor):
    response = api_of(side, role).get("/api/skills/tools/", flavor=flavor)

    assert response.status_code == 200
    tools = response.json()["tools"]
    names = {
        tool["name"] if flavor == "anthropic" else tool["function"]["name"]
        for tool in tools
    }
    assert names == tier_skills(role)


@pytest.mark.parametrize("role", ROLES)
def test_the_direct_lane_answers_only_tiers_that_may_search_people(api_of, role):
    """The direct lane is people search without a skill call: same permissions."""
    response = api_of("a", role).post(
        "/api/agent/turns/", {"message": "dana@arndt.example"}
    )

    assert response.status_code == 200
    lane = response.json()["lane"]
    assert (lane == "direct") == allowed(role, "people_search")
