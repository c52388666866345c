import pytest

from household.models import Conversation
from people_search.turns import BUDGET_BANNER, direct_people_query
from tests.builders import build_lead


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("dana.levi@example.org", "dana.levi@example.org"),
        ("dana.levi@example.org?", "dana.levi@example.org"),
        ("  +49 30 12345678!  ", "+49 30 12345678"),
        ("030 12345678.", "030 12345678"),
        ("0171 2345678", "0171 2345678"),
        ("find dana@example.org", None),
        ("2026-10-01", None),
        ("12.50", None),
        ("0171", None),
        ("+49 30", None),
        ("Dana", None),
        ("171 2345678", None),
    ],
)
def test_direct_people_query(message, expected):
    assert direct_people_query(message, region="DE") == expected


def turn(api, message, conversation_id=None):
    body = {"message": message}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return api.client.post(
        "/api/agent/turns/", body, content_type="application/json", **api.headers()
    )


@pytest.fixture
def dana(household, admin_membership):
    return build_lead(
        household,
        "Dana",
        last_name="Levi",
        email="dana@example.org",
        owner=admin_membership,
    )


def test_first_message_with_only_an_email_takes_the_direct_lane(api, dana):
    response = turn(api, "dana@example.org?")

    assert response.status_code == 200
    body = response.json()
    assert body["lane"] == "direct"
    assert body["title"] == "dana@example.org?"
    assert body["result"]["totalCount"] == 1
    assert body["result"]["items"][0]["name"] == "Dana Levi"
    assert body["card"]["kind"] == "people_results"
    conversation = Conversation.objects.get(pk=body["conversation_id"])
    assert conversation.title == "dana@example.org?"
    assert conversation.turn_count == 1


def test_anything_else_goes_to_the_router(api, dana):
    body = turn(api, "Wer ist Dana?").json()

    assert body == {"lane": "router", "conversation_id": body["conversation_id"]}


def test_later_messages_never_take_the_direct_lane(api, dana):
    first = turn(api, "Hallo").json()

    second = turn(api, "dana@example.org", first["conversation_id"]).json()

    assert second["lane"] == "router"


def test_over_budget_direct_lookups_still_work_in_any_conversation(api, dana):
    first = turn(api, "Hallo").json()
    api.client.post(
        "/api/agent/usage/",
        {"conversation_id": first["conversation_id"], "tokens": 1_000_000},
        content_type="application/json",
        **api.headers(),
    )

    direct = turn(api, "dana@example.org", first["conversation_id"]).json()
    blocked = turn(api, "Schreib Dana eine Mail", first["conversation_id"]).json()

    assert direct["lane"] == "direct"
    assert direct["result"]["items"][0]["name"] == "Dana Levi"
    assert blocked["lane"] == "blocked"
    assert blocked["error"]["code"] == "agent_budget_exceeded"
    assert blocked["banner"] == BUDGET_BANNER


def test_usage_reports_the_month_so_far(api):
    first = turn(api, "Hallo").json()

    response = api.client.post(
        "/api/agent/usage/",
        {"conversation_id": first["conversation_id"], "tokens": 1200},
        content_type="application/json",
        **api.headers(),
    )

    assert response.json() == {
        "used": 1200,
        "allowance": 1_000_000,
        "over_budget": False,
    }


def test_another_members_conversation_is_not_found(api, api_as, household):
    from tests.builders import build_member

    other = api_as(build_member(household, "jonas"))
    conversation_id = turn(other, "Hallo").json()["conversation_id"]

    assert turn(api, "Hallo", conversation_id).status_code == 404
    usage = api.client.post(
        "/api/agent/usage/",
        {"conversation_id": conversation_id, "tokens": 5},
        content_type="application/json",
        **api.headers(),
    )
    assert usage.status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"message": 5},
        {"message": "x", "conversation_id": "1"},
        {"message": "x", "y": 1},
    ],
)
def test_bad_turns_are_invalid_input(api, body):
    response = api.client.post(
        "/api/agent/turns/", body, content_type="application/json", **api.headers()
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_turns_need_a_token(client, db):
    response = client.post(
        "/api/agent/turns/", {"message": "x"}, content_type="application/json"
    )

    assert response.status_code == 401
