"""The MCP tools with B's ids, phones and names: nothing of B, not even a count.

The REST matrix's probes (test_cross_household), tiers (test_tiers), bad
tokens (test_tokens) and hostile names (test_hostile_text), sent through
/mcp/ instead. Every probe also runs as B's admin, the control that shows it
would find B's data if the household filter were missing.
"""

import json
from typing import Any

import pytest
from django.test import Client

from tests.conftest import McpClient, mcp_error
from tests.isolation.test_cross_household import (
    CALLERS,
    PROBES,
    found,
    recipient_cases,
)
from tests.isolation.test_hostile_text import HOSTILE_CALLS, strings_in
from tests.isolation.test_tiers import MINIMAL_INPUTS, SIDES, SKILLS, allowed
from tests.isolation.test_tokens import BAD_AUTHORIZATION
from tests.isolation.world import HOSTILE, ROLES, World, shows_b
from yorik.mcp import UNTRUSTED_META
from yorik.registry import all_skills

pytestmark = pytest.mark.django_db

# Values that exist in no household, twins of B's for the recipient check.
NOWHERE = {"contact_id": 10**9, "template_id": "no-such-template"}


def b_values(world: World) -> dict[str, Any]:
    return {
        "contact_id": world.b.contact.pk,
        "template_id": world.b.template.template_id,
    }


def test_every_tool_is_probed_with_bs_data():
    probed = {skill_name for skill_name, _ in PROBES.values()}
    # Tested below by their own tests: ranked picks, the recipient check and
    # remembering a word for B's people.
    probed |= {"list_contacts_for_picking", "compose_check_recipient"}
    probed |= {"remember_relation"}

    assert {skill.name for skill in all_skills()} <= probed


@pytest.mark.parametrize(("side", "role"), CALLERS)
@pytest.mark.parametrize("probe", PROBES)
def test_tool_queries_for_bs_data_find_nothing(mcp_of, probe, side, role):
    skill_name, inputs = PROBES[probe]

    result = mcp_of(side, role).call(skill_name, inputs)

    assert result["isError"] is False, result
    rows, count = found(result["structuredContent"])
    text = json.dumps(result)
    if side == "b":
        assert rows, "The probe finds nothing even in B: fix the probe."
        assert count
        assert shows_b(text)
    else:
        assert rows == []
        assert count == 0
        assert not shows_b(text)


@pytest.mark.parametrize("role", ROLES)
def test_ranked_picks_of_bs_contacts_are_dropped_from_the_tools_card(
    world, mcp_of, role
):
    b_ids = [contact.pk for contact in world.b.contacts]
    picks = [
        {"id": pk, "confidence": 0.9, "reason": "x"}
        for pk in [*b_ids, world.a.contact.pk]
    ]

    result = mcp_of("a", role).call(
        "list_contacts_for_picking", {"query": "Saba", "ranked_picks": picks}
    )

    answer = result["structuredContent"]
    assert sorted(answer["dropped"]) == sorted(b_ids)
    assert answer["rendered"] == 1
    (link,) = [item for item in result["content"] if item["type"] == "resource_link"]
    page = Client().get(link["uri"])
    assert page.status_code == 200
    assert world.a.contact.display_name in page.text
    assert not shows_b(page.text)


@pytest.mark.parametrize(
    "case",
    [
        "B's contact, A's template",
        "A's contact, B's template",
        "B's contact and template",
    ],
)
@pytest.mark.parametrize("role", ROLES)
def test_bs_ids_answer_exactly_as_missing_ids_do(world, mcp_of, role, case):
    inputs = recipient_cases(world)[case]
    theirs = b_values(world)
    twin = {
        key: NOWHERE[key] if value == theirs[key] else value
        for key, value in inputs.items()
    }
    client = mcp_of("a", role)

    error = mcp_error(client.call("compose_check_recipient", inputs))
    missing = mcp_error(client.call("compose_check_recipient", twin))

    expected = "not_found" if allowed(role, "compose_check_recipient") else "forbidden"
    assert error["code"] == expected
    written = json.dumps(error)
    for key, value in inputs.items():
        if value == theirs[key]:
            written = written.replace(str(value), str(NOWHERE[key]))
    assert written == json.dumps(missing)
    assert not shows_b(json.dumps(error))


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_tools_list_holds_exactly_the_tiers_skills(mcp_of, side, role):
    names = {tool["name"] for tool in mcp_of(side, role).tools()}

    assert names == {name for name in SKILLS if allowed(role, name)}


@pytest.mark.parametrize("skill_name", SKILLS)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("side", SIDES)
def test_tool_call_is_allowed_exactly_for_the_tiers(
    world, mcp_of, side, role, skill_name
):
    inputs = MINIMAL_INPUTS[skill_name](getattr(world, side))

    result = mcp_of(side, role).call(skill_name, inputs)

    if allowed(role, skill_name):
        assert result["isError"] is False, result
    else:
        assert mcp_error(result)["code"] == "forbidden"
    if side == "a":
        assert not shows_b(json.dumps(result))


def post_both(client: McpClient) -> list[Any]:
    """Send a tools/list and a tools/call; return both responses."""
    return [
        client.post("tools/list"),
        client.post("tools/call", {"name": "find_person", "arguments": {}}),
    ]


@pytest.mark.parametrize("bad", BAD_AUTHORIZATION)
def test_bad_authorization_is_401_on_mcp(world, bad):
    header = BAD_AUTHORIZATION[bad](world)
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}

    for response in post_both(McpClient(**extra)):
        assert response.status_code == 401, response.content
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["data"]["code"] == "unauthorized"
        assert response["WWW-Authenticate"].startswith(
            'Bearer resource_metadata="http://testserver/.well-known/'
        )


def test_a_logged_in_session_is_no_mcp_credential(world):
    client = McpClient()
    client.client.force_login(world.a.admin.profile.user)

    for response in post_both(client):
        assert response.status_code == 401


def test_a_live_token_gets_past_authentication_on_mcp(world):
    """The control: the same requests with a live token are not refused."""
    for response in post_both(McpClient(world.a.tokens["admin"])):
        assert response.status_code == 200, response.content


@pytest.mark.parametrize("skill_name", sorted(HOSTILE_CALLS))
def test_tools_answer_hostile_names_verbatim_and_marked_untrusted(
    world, mcp_of, skill_name
):
    client = mcp_of("a", "admin")
    for inputs, expected in HOSTILE_CALLS[skill_name](world):
        result = client.call(skill_name, inputs)

        assert result["isError"] is False, result
        assert UNTRUSTED_META in result["_meta"]
        strings = set(strings_in(result["structuredContent"]))
        for name in expected:
            assert name in strings, (inputs, name)


def test_tool_definitions_carry_no_contact_text(world, mcp_of):
    listed = json.dumps(mcp_of("a", "admin").tools())

    for text in [*HOSTILE, world.a.contact.display_name]:
        assert json.dumps(text)[1:-1] not in listed


@pytest.mark.parametrize("target", ["contact_id", "user_id"])
@pytest.mark.parametrize("role", ROLES)
def test_a_word_for_bs_people_answers_as_for_missing_ones(world, mcp_of, role, target):
    theirs = {
        "contact_id": world.b.contact.pk,
        "user_id": world.b.admin.profile_id,
    }[target]
    client = mcp_of("a", role)

    error = mcp_error(
        client.call("remember_relation", {target: theirs, "word": "Nachbar"})
    )
    missing = mcp_error(
        client.call("remember_relation", {target: 10**9, "word": "Nachbar"})
    )

    expected = "not_found" if allowed(role, "remember_relation") else "forbidden"
    assert error == missing
    assert error["code"] == expected
