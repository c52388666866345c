import json

import jsonschema
import pytest

from household.models import Membership, MembershipStatus
from tests.builders import build_member


def test_skill_list_holds_manifests_with_the_spec_keys(api):
    response = api.get("/api/skills/")

    assert response.status_code == 200
    manifests = {m["name"]: m for m in response.json()["skills"]}
    find_person = manifests["find_person"]
    assert set(find_person) == {
        "name",
        "description",
        "when_to_use",
        "inputs",
        "outputs",
        "cost",
        "permissions",
        "side_effects",
        "tags",
    }
    assert find_person["inputs"]["source"] == {
        "required": False,
        "type": "string",
        "enum": ["auto", "household", "contacts"],
        "default": "auto",
        "description": find_person["inputs"]["source"]["description"],
    }
    assert find_person["inputs"]["limit"]["default"] == 10
    assert find_person["inputs"]["limit"]["maximum"] == 50
    assert set(find_person["outputs"]) >= {"results", "count", "ambiguous"}


def test_one_manifest(api):
    response = api.get("/api/skills/find_person/")

    assert response.status_code == 200
    assert response.json()["permissions"] == ["admin", "member", "restricted"]


def test_unknown_skill_is_404_in_json(api):
    response = api.get("/api/skills/make_coffee/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert api.call("make_coffee").json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("flavor", ["openai", "anthropic"])
def test_tools_are_valid_function_definitions(api, flavor):
    response = api.get("/api/skills/tools/", flavor=flavor)

    assert response.status_code == 200
    tools = response.json()["tools"]
    assert tools
    for tool in tools:
        if flavor == "openai":
            assert tool["type"] == "function"
            definition = tool["function"]
            schema = definition["parameters"]
        else:
            definition = tool
            schema = tool["input_schema"]
        assert set(definition) >= {"name", "description"}
        assert "When to use" in definition["description"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False


def test_tools_parameters_validate_what_the_api_accepts(api):
    tools = {
        t["function"]["name"]: t for t in api.get("/api/skills/tools/").json()["tools"]
    }
    schema = tools["find_person"]["function"]["parameters"]

    jsonschema.validate({"query": "Hans", "source": "contacts", "limit": 5}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "Hans", "limit": 51}, schema)


def test_unknown_flavor_is_invalid_input(api):
    response = api.get("/api/skills/tools/", flavor="cohere")

    assert response.status_code == 400
    assert "flavor" in response.json()["error"]["fields"]


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Bearer nope", "Token abc", "Bearer a b"],
)
def test_missing_or_malformed_tokens_are_401(client, db, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}

    response = client.get("/api/skills/", **extra)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response["WWW-Authenticate"] == "Bearer"


def test_revoked_token_is_401(api):
    from yorik.tokens import revoke_tokens

    revoke_tokens(profile=api.membership.profile)

    assert api.get("/api/skills/").status_code == 401


def test_removed_member_and_deleted_profile_cannot_call(api_as, household):
    from django.utils import timezone

    removed = api_as(build_member(household, "rita", status=MembershipStatus.REMOVED))
    deleted_membership = build_member(household, "dora")
    deleted = api_as(deleted_membership)
    deleted_membership.profile.deleted_at = timezone.now()
    deleted_membership.profile.save()

    assert removed.call("find_person", {"query": "x"}).status_code == 401
    assert deleted.call("find_person", {"query": "x"}).status_code == 401


@pytest.mark.parametrize("status", ["pending", "paused", "cancelled"])
def test_an_offboarded_admins_token_acts_again_only_once_active(api, status):
    """Offboarding cuts the token at once; reactivating gives the tier back."""
    membership = api.membership

    Membership.objects.filter(pk=membership.pk).update(status=status)
    refused = api.get("/api/skills/")
    Membership.objects.filter(pk=membership.pk).update(status="active")
    again = api.get("/api/skills/")

    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    assert status in refused.json()["error"]["message"]
    assert again.status_code == 200
    assert "compose_check_recipient" in {s["name"] for s in again.json()["skills"]}


def test_non_json_body_is_invalid_input(api):
    response = api.call("find_person", "{not json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_body_that_is_not_an_object_is_invalid_input(api):
    response = api.call("find_person", ["Hans"])

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_unknown_keys_wrong_types_and_ranges_are_rejected(api):
    response = api.call("find_person", {"query": 5, "limit": 51, "colour": "red"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert set(error["fields"]) == {"query", "limit", "colour"}
    assert "colour" in error["message"]


def test_get_on_a_call_endpoint_is_a_json_405(api):
    response = api.get("/api/skills/find_person/call/")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_unknown_api_path_is_a_json_404(api):
    response = api.get("/api/nothing-here/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_throttling_answers_429_per_token(api, api_as, household, monkeypatch):
    from yorik.throttling import TokenRateThrottle

    monkeypatch.setattr(TokenRateThrottle, "THROTTLE_RATES", {"skills": "2/min"})
    other = api_as(build_member(household, "jonas"))

    statuses = [api.get("/api/skills/").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    throttled = api.get("/api/skills/")
    assert throttled.json()["error"]["code"] == "throttled"
    assert "Retry-After" in throttled
    assert other.get("/api/skills/").status_code == 200


def test_openapi_schema_documents_each_skill(client, db):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    schema = response.json()
    operation = schema["paths"]["/api/skills/find_person/call/"]["post"]
    assert operation["operationId"] == "call_find_person"
    assert "requestBody" in operation
    assert "200" in operation["responses"]


POST_ROUTES = [
    "/api/skills/find_person/call/",
    "/api/skills/people_search/call/",
    "/api/agent/turns/",
    "/api/agent/usage/",
]


@pytest.mark.parametrize("path", POST_ROUTES)
def test_json_nested_a_thousand_levels_deep_is_invalid_input(api, path):
    body = '{"query": ' + "[" * 1000 + "]" * 1000 + "}"

    response = api.client.post(
        path, body, content_type="application/json", **api.headers()
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("path", POST_ROUTES)
def test_a_body_over_the_upload_limit_is_a_json_413(api, settings, path):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000

    response = api.client.post(
        path,
        json.dumps({"query": "x" * 5_000}),
        content_type="application/json",
        **api.headers(),
    )

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "payload_too_large"


def test_each_call_is_validated_afresh(api, household):
    """Input serializers are kept between calls: nothing of one call's inputs,
    defaults or errors reaches the next."""
    from tests.builders import build_contact

    for number in range(12):
        build_contact(household, f"Kept Person{number:02d}", kind="person")

    limited = api.call("find_person", {"query": "Kept", "limit": 3})
    refused = api.call("find_person", {"query": "Kept", "limit": 0, "nope": 1})
    defaults = api.call("find_person", {"query": "Kept"})
    fine = api.call("find_person", {"query": "Kept", "source": "contacts"})

    assert len(limited.json()["results"]) == 3
    assert refused.status_code == 400
    assert set(refused.json()["error"]["fields"]) == {"limit", "nope"}
    assert len(defaults.json()["results"]) == 10
    assert fine.status_code == 200
    assert {row["source"] for row in fine.json()["results"]} == {"contacts"}


def test_manifests_and_tools_are_built_once_per_tier_not_per_request(api, monkeypatch):
    from yorik import registry

    registry.manifests_for_tier.cache_clear()
    registry.tools_for_tier.cache_clear()
    built = {"manifest": 0, "tool": 0}
    manifest, tool = registry.Skill.manifest, registry.Skill.tool

    def counted_manifest(skill):
        built["manifest"] += 1
        return manifest(skill)

    def counted_tool(skill, flavor):
        built["tool"] += 1
        return tool(skill, flavor)

    monkeypatch.setattr(registry.Skill, "manifest", counted_manifest)
    monkeypatch.setattr(registry.Skill, "tool", counted_tool)

    first = api.get("/api/skills/").json()
    once = dict(built)
    for _ in range(3):
        assert api.get("/api/skills/").json() == first
        api.get("/api/skills/find_person/")
        api.get("/api/skills/tools/")
    tools_once = built["tool"]
    api.get("/api/skills/tools/")

    assert once == {"manifest": len(first["skills"]), "tool": 0}
    assert built["manifest"] == once["manifest"]
    assert built["tool"] == tools_once == len(first["skills"])
