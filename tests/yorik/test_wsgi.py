"""The WSGI entry point the app server serves: API token requests take a
shorter way.

Each request goes through `yorik.wsgi.application`, as under the server, and
the same request through Django's handler with every middleware; what the
caller sees must not differ.
"""

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import RequestFactory

from tests.builders import build_contact
from yorik import wsgi

# Set per response, or by the session middleware on pages only.
VARYING = {"Date", "Set-Cookie"}


@pytest.fixture(autouse=True)
def one_connection() -> Iterator[None]:
    """Keep the test's connection open across requests, as Django's test
    client does: the handlers would close it at the end of each request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def serve(
    handler: Any, method: str, path: str, body: Any = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """Return the status, headers and body the WSGI app answers."""
    factory = RequestFactory(headers=headers)
    if method == "GET":
        request = factory.get(path)
    else:
        request = factory.post(
            path, orjson.dumps(body), content_type="application/json"
        )
    answered: dict[str, Any] = {}

    def start_response(status: str, response_headers: list, exc_info=None) -> None:
        answered["status"] = int(status.split()[0])
        answered["headers"] = dict(response_headers)

    chunks = handler(request.environ, start_response)
    try:
        content = b"".join(chunks)
    finally:
        chunks.close()
    return answered["status"], answered["headers"], content


def both(method: str, path: str, body: Any = None, **headers: str):
    """Serve the request through the entry point and through every middleware."""
    through_entry = serve(wsgi.application, method, path, body, **headers)
    through_all = serve(WSGIHandler(), method, path, body, **headers)
    return through_entry, through_all


def same_answer(through_entry, through_all) -> None:
    """Assert the same status, body and headers. With every middleware, the
    page middleware reads the session (for the logged-in user) and so says
    the answer varies by cookie; a token request's answer does not."""
    status, headers, content = through_entry
    assert (status, content) == (through_all[0], through_all[2])
    expected = {k: v for k, v in through_all[1].items() if k not in VARYING}
    if "Vary" in expected:
        expected["Vary"] = expected["Vary"].replace(", Cookie", "")
    assert {k: v for k, v in headers.items() if k not in VARYING} == expected


def test_token_requests_skip_the_page_middleware() -> None:
    session_only = {
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
        "axes.middleware.AxesMiddleware",
    }
    assert not session_only & set(settings.TOKEN_MIDDLEWARE)
    chosen = {
        ("/api/skills/", "Bearer x"): wsgi.token_requests,
        ("/api/skills/find_person/call/", "Bearer x"): wsgi.token_requests,
        ("/api/skills/", ""): wsgi.everything,
        ("/api/skills/", "Token x"): wsgi.everything,
        ("/admin/", "Bearer x"): wsgi.everything,
        ("/mcp/", "Bearer x"): wsgi.everything,
        ("/de/dashboard/leads", "Bearer x"): wsgi.everything,
    }
    for (path, authorization), handler in chosen.items():
        environ = {"PATH_INFO": path}
        if authorization:
            environ["HTTP_AUTHORIZATION"] = authorization
        expected = handler is wsgi.token_requests
        assert wsgi.is_token_request(environ) is expected, (path, authorization)


def test_token_middleware_keeps_the_order_of_all_middleware() -> None:
    positions = [settings.MIDDLEWARE.index(name) for name in settings.TOKEN_MIDDLEWARE]
    assert positions == sorted(positions)


def test_skill_calls_answer_the_same_through_the_entry_point(api, household) -> None:
    build_contact(
        household,
        "Jonas Weber",
        kind="person",
        channels=[{"kind": "phone", "value": "+49 30 1234567"}],
    )
    bearer = {"Authorization": f"Bearer {api.token}"}
    calls = [
        ("GET", "/api/skills/", None, {}),
        ("POST", "/api/skills/find_person/call/", {"query": "Jonas"}, {}),
        (
            "POST",
            "/api/skills/find_person/call/",
            {"channel_kind": "phone", "channel_value": "030 1234567"},
            {},
        ),
        # Field errors in the language asked for.
        (
            "POST",
            "/api/skills/find_person/call/",
            {"limit": 0},
            {"Accept-Language": "de"},
        ),
        (
            "POST",
            "/api/skills/find_person/call/",
            {"limit": 0},
            {"Accept-Language": "en"},
        ),
        ("POST", "/api/skills/nobody/call/", {}, {}),
        ("GET", "/api/nothing-here/", None, {}),
    ]
    for method, path, body, extra in calls:
        through_entry, through_all = both(method, path, body, **bearer, **extra)
        assert through_entry[0] != 500, through_entry
        same_answer(through_entry, through_all)
        if path == "/api/skills/find_person/call/" and body == {"query": "Jonas"}:
            assert orjson.loads(through_entry[2])["count"] == 1
    german = serve(
        wsgi.application,
        "POST",
        "/api/skills/find_person/call/",
        {"limit": 0},
        **bearer,
        **{"Accept-Language": "de"},
    )
    assert german[0] == 400
    assert german[1]["Content-Language"] == "de"
    assert "limit" in orjson.loads(german[2])["error"]["fields"]


def test_a_wrong_token_is_refused_the_same_way(db) -> None:
    through_entry, through_all = both(
        "GET", "/api/skills/", Authorization="Bearer not-a-token"
    )
    assert through_entry[0] == 401
    same_answer(through_entry, through_all)


def test_pages_still_get_sessions_and_csrf(db) -> None:
    status, headers, content = serve(
        wsgi.application, "GET", "/accounts/login/", Authorization="Bearer whatever"
    )
    assert status == 200
    assert "csrftoken=" in headers.get("Set-Cookie", "")
    assert b"csrfmiddlewaretoken" in content
