import json
import os

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import translation

from tests.builders import LoginClient, build_household, build_member

if os.environ.get("YORIK_CITUS_SUITE") == "1":

    @pytest.fixture(scope="session")
    def django_db_setup(django_db_setup, django_db_blocker):
        """On a Citus coordinator (python -m tests.citus.suite), distribute the
        migrated test database's tables by household, as an operator would."""
        with django_db_blocker.unblock():
            call_command("distribute_tables", "--shard-count", "4", verbosity=0)
            # No statement may join a household table to a table on the
            # coordinator (yorik.citus): Citus would otherwise send the
            # coordinator's rows along to the worker, slowly but silently.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT format('ALTER DATABASE %I SET "
                    "citus.local_table_join_policy = never', current_database())"
                )
                cursor.execute(cursor.fetchone()[0])
            # The sessions Citus opened on the workers while distributing
            # predate the settings it gave their database; a new connection
            # opens new ones.
            connection.close()


@pytest.fixture(autouse=True)
def site_language_after_each_test():
    """A German page leaves its thread German (LocaleMiddleware activates the
    language and nothing resets it); the next test starts in the site's own."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def client():
    return LoginClient()


@pytest.fixture
def household(db):
    return build_household("becker")


@pytest.fixture
def other_household(db):
    return build_household(
        "levi", name="Levi family", default_region="IL", language="en"
    )


@pytest.fixture
def admin_membership(household):
    return build_member(
        household, "anna", role="admin", lead_access="all", last_name="Becker"
    )


class ApiClient:
    """Calls the agent API as one member, with their bearer token."""

    def __init__(self, client, membership):
        from yorik.tokens import issue_token

        _, self.token = issue_token(profile=membership.profile)
        self.client = client
        self.membership = membership

    def headers(self):
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"}

    def get(self, path, **params):
        return self.client.get(path, params, **self.headers())

    def call(self, skill, inputs=None, **extra):
        return self.client.post(
            f"/api/skills/{skill}/call/",
            inputs if inputs is not None else {},
            content_type="application/json",
            **self.headers(),
            **extra,
        )


@pytest.fixture
def api_as(client):
    """Return a function that gives an API client acting as a membership."""
    return lambda membership: ApiClient(client, membership)


@pytest.fixture
def api(api_as, admin_membership):
    return api_as(admin_membership)


MCP_VERSION = "2026-07-28"


class McpClient:
    """Speaks MCP to /mcp/ in-process, through Django's test client.

    tests/yorik/test_mcp.py drives the official SDK against a live server;
    this client is for matrices, where a live server per case would be slow.
    It sends what a 2026-07-28 client sends: protocol headers and _meta.
    """

    def __init__(self, token: str | None = None, **headers: str) -> None:
        if token is not None:
            headers.setdefault("HTTP_AUTHORIZATION", f"Bearer {token}")
        self.client = Client(**headers)

    def post(self, method: str, params: dict | None = None, **extra: str):
        meta = {
            "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers = {"HTTP_MCP_PROTOCOL_VERSION": MCP_VERSION, "HTTP_MCP_METHOD": method}
        if method == "tools/call":
            headers["HTTP_MCP_NAME"] = params["name"]
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {**(params or {}), "_meta": meta},
        }
        return self.client.post(
            "/mcp/",
            body,
            content_type="application/json",
            HTTP_ACCEPT="application/json, text/event-stream",
            **{**headers, **extra},
        )

    def tools(self) -> list[dict]:
        response = self.post("tools/list")
        assert response.status_code == 200, response.content
        return response.json()["result"]["tools"]

    def call(self, name: str, arguments: dict) -> dict:
        """Return the tool result of a call (isError or not)."""
        response = self.post("tools/call", {"name": name, "arguments": arguments})
        assert response.status_code == 200, response.content
        assert "result" in response.json(), response.content
        return response.json()["result"]


def mcp_error(result: dict) -> dict:
    """Return the REST-shaped error an isError tool result carries as its text."""
    assert result["isError"] is True, result
    return json.loads(result["content"][0]["text"])["error"]


@pytest.fixture
def mcp_as(db):
    """Return a function that gives an MCP client acting as a membership."""

    def as_member(membership):
        from yorik.tokens import issue_token

        _, token = issue_token(profile=membership.profile)
        return McpClient(token)

    return as_member
