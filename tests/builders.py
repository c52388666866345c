"""Small builders for test data; each writes through the project's own services."""

from typing import Any

from contacts.models import Contact
from contacts.services import create_contact
from household.models import Household, Lead, Membership
from household.services import create_lead, create_member

PASSWORD = "correct-horse-battery"


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


def build_lead(household: Household, first_name: str, **fields: Any) -> Lead:
    return create_lead(household=household, first_name=first_name, **fields)


def build_contact(household: Household, display_name: str, **fields: Any) -> Contact:
    return create_contact(household=household, display_name=display_name, **fields)
