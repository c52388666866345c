"""A database that is down, hung or too slow: 503 with Retry-After, then recovery."""

import os
import signal
import time

import pytest
from django.db import close_old_connections, connection
from django.test import Client

from tests.builders import build_contact
from tests.conftest import McpClient
from tests.yorik.test_settings import run_manage
from yorik.tokens import issue_token


@pytest.fixture
def too_slow(db):
    """Make every statement outlast a short statement timeout, in PostgreSQL.

    Each statement is replaced by a sleep that PostgreSQL cancels after 50 ms,
    as it cancels any statement slower than YORIK_DB_STATEMENT_TIMEOUT.
    """

    def sleep_instead(execute, sql, params, many, context):
        return execute("SELECT pg_sleep(1)", None, False, context)

    def start():
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = '50ms'")
        return connection.execute_wrapper(sleep_instead)

    return start


@pytest.fixture
def token(admin_membership):
    return issue_token(profile=admin_membership.profile)[1]


def test_the_api_answers_503_when_statements_time_out(too_slow, token, household):
    build_contact(household, "Gisela Becker")
    with too_slow():
        response = Client().post(
            "/api/skills/find_person/call/",
            {"query": "Gisela"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert "try again" in error["message"]


def test_mcp_answers_503_when_statements_time_out(too_slow, token):
    with too_slow():
        response = McpClient(token).post(
            "tools/call", {"name": "find_person", "arguments": {"query": "Gisela"}}
        )

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"]["data"]["code"] == "unavailable"


@pytest.mark.parametrize(
    ("language", "text"),
    [("en", "Temporarily unavailable"), ("de", "Vorübergehend nicht erreichbar")],
)
def test_pages_answer_a_plain_503_page(too_slow, admin_membership, language, text):
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(admin_membership.profile.user)
    with too_slow():
        response = client.get("/contacts/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert text in response.text
    assert "Traceback" not in response.text


def call_find_person(token):
    """Call the API as a server does: old connections are let go after a request.

    Django's WSGI handler does so on request_finished; its test client leaves
    it out, to keep a test's transaction open.
    """
    response = Client().post(
        "/api/skills/find_person/call/",
        {"query": "Gisela"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    close_old_connections()
    return response


@pytest.fixture
def answer_timeout():
    """Give up on a silent server after half a second (settings: ANSWER_TIMEOUT)."""
    before = connection.settings_dict.get("ANSWER_TIMEOUT")
    connection.close()
    connection.settings_dict["ANSWER_TIMEOUT"] = 0.5
    yield 0.5
    connection.close()
    connection.settings_dict["ANSWER_TIMEOUT"] = before


@pytest.mark.django_db(transaction=True)
def test_a_hung_server_is_given_up_and_the_next_request_recovers(token, answer_timeout):
    """The server process of the connection stops in the middle of a request."""
    stopped = []

    def stop_the_server(execute, sql, params, many, context):
        if not stopped:
            stopped.append(context["connection"].connection.info.backend_pid)
            os.kill(stopped[0], signal.SIGSTOP)
        return execute(sql, params, many, context)

    assert call_find_person(token).status_code == 200
    try:
        with connection.execute_wrapper(stop_the_server):
            started = time.monotonic()
            hung = call_find_person(token)
            waited = time.monotonic() - started
    finally:
        for backend in stopped:
            os.kill(backend, signal.SIGCONT)

    recovered = call_find_person(token)

    assert stopped
    assert hung.status_code == 503
    assert hung.json()["error"]["code"] == "unavailable"
    assert answer_timeout <= waited < 3
    assert recovered.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_server_that_is_down_gets_503_until_it_is_back(token):
    assert call_find_person(token).status_code == 200
    connection.close()
    port = connection.settings_dict.get("PORT")
    connection.settings_dict["PORT"] = "1"  # no server listens there
    try:
        down = call_find_person(token)
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port

    back = call_find_person(token)

    assert down.status_code == 503
    assert down["Retry-After"] == "5"
    assert back.status_code == 200


def test_requests_run_with_the_statement_timeout(db):
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "10s"


def test_commands_run_without_a_statement_timeout():
    result = run_manage(
        "shell",
        "-c",
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('SHOW statement_timeout')\n"
        "    print(cursor.fetchone()[0])",
    )

    assert result.stdout.split()[-1] == "0", result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_bundled_server_that_cannot_start_yet_gets_503(token, monkeypatch):
    """E.g. a server still shutting down when the app wants to start it again."""

    def refuse(data_dir):
        raise AssertionError("postmaster status is 'stopping'")

    assert call_find_person(token).status_code == 200
    connection.close()
    with monkeypatch.context() as patch:
        patch.setattr("yorik.database.base.ensure_server", refuse)
        starting = call_find_person(token)
    connection.close()

    assert starting.status_code == 503
    assert starting.json()["error"]["code"] == "unavailable"
    assert call_find_person(token).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_before_a_request_uses_it(token):
    """E.g. after a restart of PostgreSQL: the request itself gets its answer."""
    # A connection older than CONN_MAX_AGE (this worker's, opened by an
    # earlier test) is let go after the first request: start with a new one.
    connection.close()
    assert call_find_person(token).status_code == 200
    backend = connection.connection.info.backend_pid
    other = connection.copy()
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
    finally:
        other.close()
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)

    assert call_find_person(token).status_code == 200
    assert connection.connection.info.backend_pid != backend


@pytest.mark.django_db(transaction=True)
def test_a_sound_idle_connection_is_checked_without_a_round_trip(monkeypatch):
    """Django's check before each request's first statement sends nothing."""
    connection.ensure_connection()

    def no_statement(*args, **kwargs):
        raise AssertionError("the health check sent a statement")

    monkeypatch.setattr(connection.connection, "cursor", no_statement)
    monkeypatch.setattr(connection.connection, "execute", no_statement)

    assert connection.is_usable()
