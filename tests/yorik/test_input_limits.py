"""A hostile body is refused at once with a small answer, on REST and MCP alike.

A body under the upload limit can hold a million list items or a quarter of a
million keys. Its refusal reads only as far as its first few faults and names
them in a few kilobytes, however many more there are.
"""

import json
import time

import pytest
from rest_framework import serializers
from rest_framework.exceptions import ParseError

from people_search.views import TurnInput, UsageInput
from tests.builders import build_member
from tests.conftest import MCP_VERSION, mcp_error
from yorik.api import FlavorSerializer
from yorik.errors import MAX_FIELDS
from yorik.parsers import MAX_NESTING, read_json
from yorik.registry import all_skills
from yorik.serializers import (
    FIRST_FAULTS,
    StrictIntegerField,
    StrictListField,
    StrictSerializer,
    validated_inputs,
)

SMALL = 4_096
# Reading every fault of these bodies takes 3 to 10 seconds.
QUICK = 2.0
SCOPES = [0] * 400_000


def with_unknown_keys(**known) -> str:
    """Return the JSON text of the inputs with 250,000 unknown keys after them."""
    unknown = ",".join(f'"{number:x}":0' for number in range(250_000))
    return f"{compact(known)[:-1]},{unknown}}}"


def compact(data) -> str:
    # Compact, as clients send it: 250,000 keys stay under the upload limit.
    return json.dumps(data, separators=(",", ":"))


@pytest.fixture
def viewer(api_as, household):
    """The lowest tier, which may call search_anything."""
    return api_as(build_member(household, "vera", role="viewer"))


def post(api, path, data):
    body = data if isinstance(data, str) else compact(data)
    started = time.monotonic()
    response = api.client.post(
        path, body, content_type="application/json", **api.headers()
    )
    return response, time.monotonic() - started


def call_tool(api, name, arguments):
    """Call a tool over MCP with the arguments' JSON text as given."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
        f'{{"name":"{name}","_meta":{compact(meta)},"arguments":{arguments}}}}}'
    )
    started = time.monotonic()
    response = api.client.post(
        "/mcp/",
        body,
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION=MCP_VERSION,
        HTTP_MCP_METHOD="tools/call",
        HTTP_MCP_NAME=name,
        **api.headers(),
    )
    return response, time.monotonic() - started


def test_a_list_far_over_its_length_is_refused_by_its_length(viewer):
    response, seconds = post(
        viewer,
        "/api/skills/search_anything/call/",
        {"query": "Anna", "scopes": SCOPES},
    )

    assert response.status_code == 400
    assert len(response.content) < SMALL
    assert response.json()["error"]["fields"] == {
        "scopes": ["Ensure this field has no more than 3 elements."]
    }
    assert seconds < QUICK


def test_a_list_far_over_its_length_is_a_small_tool_error_over_mcp(viewer):
    response, seconds = call_tool(
        viewer, "search_anything", compact({"query": "Anna", "scopes": SCOPES})
    )

    assert response.status_code == 200
    assert len(response.content) < SMALL
    error = mcp_error(response.json()["result"])
    assert error["code"] == "invalid_input"
    assert list(error["fields"]) == ["scopes"]
    assert seconds < QUICK


def assert_first_unknown_keys_and_a_count(error):
    assert error["code"] == "invalid_input"
    unknown = [
        path
        for path, messages in error["fields"].items()
        if messages == ["Unknown field."]
    ]
    assert unknown == ["0", "1", "2", "3", "4"]
    assert error["fields"]["non_field_errors"] == [
        f"And {250_000 - FIRST_FAULTS:,} more unknown fields."
    ]


@pytest.mark.parametrize(
    ("path", "known"),
    [
        ("/api/skills/search_anything/call/", {"query": "Anna"}),
        ("/api/agent/turns/", {"message": "Anna"}),
    ],
)
def test_unknown_keys_are_named_the_first_few_and_counted(viewer, path, known):
    response, seconds = post(viewer, path, with_unknown_keys(**known))

    assert response.status_code == 400
    assert len(response.content) < SMALL
    assert_first_unknown_keys_and_a_count(response.json()["error"])
    assert seconds < QUICK


def test_unknown_keys_are_named_the_first_few_and_counted_over_mcp(viewer):
    response, seconds = call_tool(
        viewer, "search_anything", with_unknown_keys(query="Anna")
    )

    assert response.status_code == 200
    assert len(response.content) < SMALL
    assert_first_unknown_keys_and_a_count(mcp_error(response.json()["result"]))
    assert seconds < QUICK


def test_an_error_body_names_the_first_fields_and_counts_the_others(api):
    picks = [{"id": "x", "confidence": "high", "reason": 5}] * 10

    response = api.call("list_contacts_for_picking", {"ranked_picks": picks})

    error = response.json()["error"]
    assert response.status_code == 400
    assert len(error["fields"]) == MAX_FIELDS
    assert error["message"].endswith("; and 27 more fields with errors")


@pytest.mark.parametrize(
    "inputs",
    [{"query": "x", "k" * 100_000: 1}, {"query": "x", "source": "s" * 100_000}],
)
def test_what_an_error_quotes_of_the_input_is_cut_short(api, inputs):
    response = api.call("find_person", inputs)

    assert response.status_code == 400
    assert len(response.content) < SMALL
    assert "…" in response.json()["error"]["message"]


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


# Inside the body's object, MAX_NESTING arrays nest one level too deep.
@pytest.mark.parametrize("levels", [MAX_NESTING, 938])
def test_json_nested_past_the_limit_is_invalid_input(viewer, levels):
    response, _ = post(
        viewer,
        "/api/skills/search_anything/call/",
        f'{{"query": "x", "scopes": {nested(levels)}}}',
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert f"JSON nested deeper than {MAX_NESTING} levels" in error["message"]


@pytest.mark.parametrize("levels", [MAX_NESTING, 938, 5_000])
def test_json_nested_past_the_limit_is_a_json_rpc_error_over_mcp(viewer, levels):
    response, _ = call_tool(viewer, "search_anything", f'{{"query": {nested(levels)}}}')

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600
    assert error["data"]["code"] == "invalid_input"
    assert f"JSON nested deeper than {MAX_NESTING} levels" in error["message"]


def test_a_body_over_the_upload_limit_is_a_json_rpc_413_over_mcp(viewer, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000

    response, _ = call_tool(viewer, "find_person", compact({"query": "x" * 5_000}))

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["data"]["code"] == "payload_too_large"


def test_a_body_over_the_upload_limit_needs_a_token_first_over_mcp(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000

    response = client.post(
        "/mcp/", compact({"query": "x" * 5_000}), content_type="application/json"
    )

    assert response.status_code == 401


@pytest.mark.parametrize(
    ("body", "nests_too_deeply"),
    [
        (nested(MAX_NESTING), False),
        (nested(MAX_NESTING + 1), True),
        ('{"a": ' * MAX_NESTING + "1" + "}" * MAX_NESTING, False),
        ("[" + "[], " * 1_000 + '"' + "[" * 100 + '"]', False),
        ('"' + "[" * 100 + '"', False),
    ],
)
def test_read_json_refuses_exactly_what_nests_past_the_limit(body, nests_too_deeply):
    refused = False
    try:
        read_json(body.encode(), json.loads)
    except ParseError:
        refused = True

    assert refused is nests_too_deeply


class Numbers(StrictSerializer):
    numbers = StrictListField(child=StrictIntegerField(), max_length=1_000)


def test_a_list_stops_at_its_first_bad_items():
    with pytest.raises(serializers.ValidationError) as refused:
        validated_inputs(Numbers, {"numbers": [1, "x", *["y"] * 998]})

    errors = refused.value.detail["numbers"]
    assert list(errors) == [1, 2, 3, 4, 5, "non_field_errors"]
    assert errors["non_field_errors"] == ["The 994 items after [5] were not checked."]


def input_serializers():
    """Every serializer that validates what the agent API is sent."""
    found = {skill.name: skill.input_serializer for skill in all_skills()}
    for serializer_class in (FlavorSerializer, TurnInput, UsageInput):
        found[serializer_class.__name__] = serializer_class
    return found


def unbounded_lists(serializer, path=""):
    """Return the paths of lists that may be validated item by item past a limit."""
    found = []
    for name, field in serializer.fields.items():
        if isinstance(field, serializers.ListSerializer):
            if field.max_length is None:
                found.append(f"{path}{name}")
            found += unbounded_lists(field.child, f"{path}{name}[].")
        elif isinstance(
            field, serializers.ListField | serializers.DictField | serializers.JSONField
        ):
            if not isinstance(field, StrictListField):
                found.append(f"{path}{name}")
        elif isinstance(field, serializers.Serializer):
            found += unbounded_lists(field, f"{path}{name}.")
    return found


@pytest.mark.parametrize(
    ("name", "serializer_class"), list(input_serializers().items())
)
def test_every_input_list_is_refused_by_its_length_before_its_items(
    name, serializer_class
):
    """DRF's ListField validates every item before it counts them."""
    assert issubclass(serializer_class, StrictSerializer)
    assert unbounded_lists(serializer_class()) == []
