"""Small builders for test data; each writes through the project's own services.

Builders stand for data written before the test: work a real commit would
trigger (indexing names for similar-name search) runs as the builder returns,
although the test's transaction never commits.
"""

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.http import HttpRequest
from django.test import Client, TestCase

from contacts.models import Contact
from contacts.services import create_contact
from household.models import Household, Lead, Membership
from household.services import create_lead, create_member

PASSWORD = "correct-horse-battery"

P = ParamSpec("P")
R = TypeVar("R")


def committed(write: Callable[P, R]) -> Callable[P, R]:
    """Run the write's on-commit work when it returns, as its commit would."""

    @functools.wraps(write)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with TestCase.captureOnCommitCallbacks(execute=True):
            return write(*args, **kwargs)

    return run


def build_household(slug: str = "becker", **fields: Any) -> Household:
    fields.setdefault("name", f"Familie {slug.title()}")
    fields.setdefault("default_region", "DE")
    fields.setdefault("language", "de")
    return Household.objects.create(slug=slug, **fields)


@committed
def build_member(
    household: Household,
    username: str,
    *,
    role: str = "member",
    status: str = "active",
    lead_access: str | None = None,
    **fields: Any,
) -> Membership:
    """Create a person with a membership, and a login unless they are a child."""
    fields.setdefault("first_name", username.title())
    return create_member(
        household=household,
        username=username,
        role=role,
        status=status,
        lead_access=lead_access,
        password=PASSWORD if role != "child" else None,
        **fields,
    )


@committed
def build_lead(household: Household, first_name: str, **fields: Any) -> Lead:
    return create_lead(household=household, first_name=first_name, **fields)


@committed
def build_contact(household: Household, display_name: str, **fields: Any) -> Contact:
    return create_contact(household=household, display_name=display_name, **fields)


class LoginClient(Client):
    """Django's test client; login() passes a request, which django-axes counts by."""

    def login(self, **credentials):
        return super().login(request=HttpRequest(), **credentials)
