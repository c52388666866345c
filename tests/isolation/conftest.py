from collections.abc import Callable, Iterator

import pytest
from django.db import transaction
from django.test import Client, override_settings

from household.models import Membership
from tests.conftest import McpClient
from tests.isolation.world import World, build_world

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> Iterator[World]:
    """Build both households once per module; roll them back after it.

    Each test still runs in its own savepoint (the `db` fixture), so what a
    test writes is gone before the next one. Modules using the world mark
    every test django_db: pytest-django creates the test database only when
    some collected test asks for it.
    """
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHERS),
        transaction.atomic(),
    ):
        yield build_world()
        transaction.set_rollback(True)


class Api:
    """Calls the agent API with one bearer token."""

    def __init__(self, token: str) -> None:
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def get(self, path: str, **params: str):
        return self.client.get(path, params)

    def post(self, path: str, body: object):
        return self.client.post(path, body, content_type="application/json")

    def call(self, skill: str, inputs: dict):
        return self.post(f"/api/skills/{skill}/call/", inputs)


@pytest.fixture
def api_of(db, world) -> Callable[[str, str], Api]:
    """Return an API client of the household ('a' or 'b') member of a role."""
    return lambda side, role: Api(getattr(world, side).tokens[role])


@pytest.fixture
def mcp_of(db, world) -> Callable[[str, str], McpClient]:
    """Return an MCP client of the household ('a' or 'b') member of a role."""
    return lambda side, role: McpClient(getattr(world, side).tokens[role])


@pytest.fixture
def a_api(api_of) -> Api:
    return api_of("a", "admin")


@pytest.fixture
def browser_of(db) -> Callable[[Membership], Client]:
    """Return a browser logged in as the membership's login."""

    def logged_in(membership: Membership) -> Client:
        client = Client()
        client.force_login(membership.profile.user)
        return client

    return logged_in
