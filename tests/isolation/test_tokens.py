"""Missing, malformed and dead tokens are 401 JSON on every route of the agent API."""

import base64
from collections.abc import Callable

import pytest
from django.test import Client

from tests.isolation.routes import Route, guarded_api_routes
from tests.isolation.world import INACTIVE_STATUSES, World
from yorik.models import ApiToken

pytestmark = pytest.mark.django_db

ROUTES = [
    pytest.param(route, method, id=f"{method.upper()} {route}")
    for route in guarded_api_routes()
    for method in route.methods()
]


def samples(world: World) -> dict[str, object]:
    """Return URL arguments that exist in household A (the caller's own)."""
    return {
        "card_id": world.a.cards["contact_picker"].pk,
        # An unknown name: authentication must answer before the lookup does.
        "name": "no_such_skill",
    }


def _basic(world: World) -> str:
    credentials = f"{world.a.admin.profile.username}:pw".encode()
    return f"Basic {base64.b64encode(credentials).decode()}"


# Authorization headers that must not authenticate; None sends no header.
BAD_AUTHORIZATION: dict[str, Callable[[World], str | None]] = {
    "no header": lambda world: None,
    "empty header": lambda world: "",
    "scheme only": lambda world: "Bearer",
    "wrong scheme": lambda world: f"Token {world.a.tokens['admin']}",
    "basic credentials": _basic,
    "token twice": lambda world: f"Bearer {world.a.tokens['admin']} x",
    "garbage token": lambda world: "Bearer yk_this-is-no-token",
    "the stored hash": lambda world: (
        "Bearer "
        + ApiToken.objects.filter(profile=world.a.admin.profile).first().key_hash
    ),
    "revoked token": lambda world: f"Bearer {world.a.dead_tokens['revoked']}",
    "removed membership": lambda world: (
        f"Bearer {world.a.dead_tokens['removed membership']}"
    ),
    "deleted profile": lambda world: f"Bearer {world.a.dead_tokens['deleted profile']}",
    # Offboarding: an admin's token does nothing while the membership is not
    # active, whatever the role would allow.
    **{
        f"{status} admin": lambda world, why=f"{status} admin": (
            f"Bearer {world.a.dead_tokens[why]}"
        )
        for status in INACTIVE_STATUSES
    },
}


def request(client: Client, method: str, url: str, **extra: str):
    return getattr(client, method)(url, {}, content_type="application/json", **extra)


@pytest.mark.parametrize("bad", BAD_AUTHORIZATION)
@pytest.mark.parametrize(("route", "method"), ROUTES)
def test_bad_authorization_is_401_json(world, route: Route, method, bad):
    header = BAD_AUTHORIZATION[bad](world)
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}

    response = request(Client(), method, route.url(samples(world)), **extra)

    assert response.status_code == 401, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "unauthorized"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("status", INACTIVE_STATUSES)
def test_an_inactive_membership_is_told_why_its_token_is_refused(world, status):
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {world.a.dead_tokens[f'{status} admin']}"
    )

    response = client.get("/api/skills/")

    assert response.status_code == 401
    assert response.json()["error"] == {
        "code": "unauthorized",
        "message": f"The membership behind this token is {status}; only active "
        "members may use the API.",
    }


@pytest.mark.parametrize(("route", "method"), ROUTES)
def test_a_logged_in_session_is_no_api_credential(
    world, browser_of, route: Route, method
):
    browser = browser_of(world.a.admin)

    response = request(browser, method, route.url(samples(world)))

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(("route", "method"), ROUTES)
def test_a_live_token_gets_past_authentication(world, route: Route, method):
    """The control: the same requests with a live token are not refused as 401."""
    client = Client(HTTP_AUTHORIZATION=f"Bearer {world.a.tokens['admin']}")

    response = request(client, method, route.url(samples(world)))

    assert response.status_code != 401, response.content
