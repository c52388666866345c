"""Small builders for test data; each writes through the project's own services."""

from typing import Any

from django.contrib.auth import get_user_model

from contacts.models import Contact
from contacts.services import create_contact
from household.models import Household, Membership, UserProfile


def build_household(slug: str = "becker", **fields: Any) -> Household:
    fields.setdefault("name", f"Familie {slug.title()}")
    fields.setdefault("default_region", "DE")
    fields.setdefault("language", "de")
    return Household.objects.create(slug=slug, **fields)


def build_member(
    household: Household,
    username: str,
    *,
    role: str = "member",
    status: str = "active",
    lead_access: str = "none",
    login: bool = True,
    **fields: Any,
) -> Membership:
    """Create a person with a membership, and a login unless they are a child."""
    user = None
    if login and role != "child":
        user = get_user_model().objects.create_user(
            username=username,
            password="correct-horse-battery",
            is_staff=role == "admin",
        )
    fields.setdefault("first_name", username.title())
    profile = UserProfile(household=household, user=user, username=username, **fields)
    profile.full_clean()
    profile.save()
    return Membership.objects.create(
        household=household,
        profile=profile,
        role=role,
        status=status,
        lead_access=lead_access,
    )


def build_contact(household: Household, display_name: str, **fields: Any) -> Contact:
    return create_contact(household=household, display_name=display_name, **fields)
