"""Fuzz every operation of /api/schema/ with schemathesis, as a demo household admin.

Bounded and derandomized, so CI sends the same requests every time; `bench/fuzz.py`
runs the same checks at length against a running server.
"""

import io
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection, transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from compose.models import LetterTemplate
from contacts.models import Contact
from contacts.providers.categories import known_category_ids
from household.models import Membership
from yorik import wsgi
from yorik.cards import pick_contact
from yorik.models import Card
from yorik.registry import all_skills
from yorik.throttling import TokenRateThrottle
from yorik.tokens import issue_token

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    ignored_auth,
]

MAX_EXAMPLES = 50
OPERATIONS = [
    result.ok()
    for result in schemathesis.openapi.from_wsgi(
        "/api/schema/", wsgi.application
    ).get_all_operations()
]


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker) -> Iterator[dict[str, Any]]:
    """Load the demo households once for this module and roll them back after it.

    Return the admin's Authorization header and ids of stored rows that
    generated inputs swap in now and then, so calls reach real data.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", stdout=io.StringIO())
        anna = Membership.objects.get(
            household__slug="becker", profile__username="anna"
        )
        _, token = issue_token(profile=anna.profile)
        auth = {"Authorization": f"Bearer {token}"}
        contact_ids = list(
            Contact.objects.filter(household=anna.household)
            .order_by("pk")
            .values_list("pk", flat=True)[:20]
        )
        client = Client(headers=auth)
        turn = client.post(
            "/api/agent/turns/", {"message": "Anna"}, content_type="application/json"
        ).json()
        card_ids = [
            client.post(
                "/api/skills/list_contacts_for_picking/call/",
                {
                    "ranked_picks": [
                        {"id": pk, "confidence": 0.9} for pk in contact_ids[:10]
                    ]
                },
                content_type="application/json",
            ).json()["card"]["id"]
            for _ in range(2)
        ]
        pick_contact(
            card=Card.objects.get(pk=card_ids[0]),
            contact_id=contact_ids[0],
        )
        yield {
            "auth": auth,
            "known": {
                "card_id": card_ids,
                "contact_id": contact_ids,
                "id": contact_ids,
                "conversation_id": [turn["conversation_id"]],
                "category": known_category_ids(),
                "name": [skill.name for skill in all_skills()],
                "template_id": list(
                    LetterTemplate.objects.filter(household=anna.household).values_list(
                        "template_id", flat=True
                    )
                ),
            },
        }
        transaction.set_rollback(True)


@pytest.fixture
def in_process_api(monkeypatch, db) -> Iterator[None]:
    """Serve the WSGI app inside the test's transaction, without rate limits.

    Django closes a connection that is not in autocommit when a request starts
    or ends, which would end the test transaction; its test client unhooks
    that the same way.
    """
    monkeypatch.setattr(TokenRateThrottle, "THROTTLE_RATES", {"skills": "100000/min"})
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def swap_in_known(value: Any, known: dict[str, list[Any]], data: st.DataObject) -> None:
    """Replace some generated ids in a request's parts with stored ones, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in known and data.draw(st.booleans()):
                value[key] = data.draw(st.sampled_from(known[key]))
            else:
                swap_in_known(item, known, data)
    elif isinstance(value, list):
        for item in value:
            swap_in_known(item, known, data)


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_operation_survives_fuzzing(operation, demo, in_process_api):
    """Given generated inputs, valid and not, every answer is documented and no 500."""
    cases = st.one_of(operation.as_strategy(mode) for mode in GenerationMode)

    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(case=cases, data=st.data())
    def call_and_validate(case, data):
        # Only valid requests: a swap would leave an invalid one's label wrong.
        if case.meta.generation.mode.is_positive:
            swap_in_known(case.path_parameters, demo["known"], data)
            swap_in_known(case.body, demo["known"], data)
        with transaction.atomic():
            response = case.call(headers=demo["auth"])
            case.validate_response(response, checks=CHECKS, headers=demo["auth"])
            transaction.set_rollback(True)

    call_and_validate()


def sample_case(operation: APIOperation, demo: dict[str, Any], **parts: Any) -> Case:
    """Return a fixed request for the operation that a right caller may send."""
    path_parameters = {"card_id": demo["known"]["card_id"][0], "name": "find_person"}
    body = {"body": {}} if operation.method == "post" else {}
    return operation.Case(path_parameters=path_parameters, **body, **parts)


@pytest.mark.parametrize(
    "authorization", [None, "Bearer yk_not-a-token", "Token abc", "Bearer"]
)
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_operation_refuses_a_missing_or_wrong_token(
    operation, authorization, demo, in_process_api
):
    """Given no token or a wrong one, every operation answers 401 in the error shape."""
    case = sample_case(operation, demo)
    headers = {"Authorization": authorization} if authorization else {}
    response = case.call(headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    case.validate_response(response, checks=[response_schema_conformance])


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_operation_documents_refusing_an_accept_header_without_json(
    operation, demo, in_process_api
):
    """Given Accept: text/html, every operation answers its documented 406."""
    case = sample_case(operation, demo)
    response = case.call(headers={**demo["auth"], "Accept": "text/html"})
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"
    case.validate_response(
        response, checks=[status_code_conformance, response_schema_conformance]
    )


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_operation_refuses_an_undeclared_method(operation, demo, in_process_api):
    """Given a method the path does not offer, 405 names the methods it does."""
    case = sample_case(operation, demo, method="DELETE")
    response = case.call(headers=demo["auth"])
    assert response.status_code == 405
    assert operation.method.upper() in response.headers["allow"][0]
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("query", ["flavor=", "flavour=anthropic", "flavor=gemini"])
def test_tools_refuse_an_empty_unknown_or_misspelt_query(query, demo, client):
    """Given a query the schema does not allow, the tools answer 400, not a default."""
    response = client.get(f"/api/skills/tools/?{query}", headers=demo["auth"])

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_rate_limit_table_exists_though_migrated_with_the_memory_cache(db):
    """Given a database migrated in debug, production's database cache has its table."""
    assert "yorik_cache" in connection.introspection.table_names()
