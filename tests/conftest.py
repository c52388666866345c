import pytest

from tests.builders import build_household, build_member


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
