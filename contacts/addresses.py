"""Postal addresses: which of a contact's addresses to write to, and what it lacks."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contacts.aggregates import ADDRESS_FIELDS
from contacts.models import AddressKind

ADDRESS_PREFERENCE = (
    AddressKind.HOME,
    AddressKind.WORK,
    AddressKind.BILLING,
    AddressKind.SHIPPING,
)


def missing_fields(
    address: Mapping[str, Any] | None, required_fields: Iterable[str]
) -> list[str]:
    """Return the required fields the address leaves blank, in address order."""
    required = set(required_fields)
    return [
        field
        for field in ADDRESS_FIELDS
        if field in required and not (address and str(address[field]).strip())
    ]


def best_postal_address(
    addresses: Sequence[Mapping[str, Any]], required_fields: Iterable[str]
) -> Mapping[str, Any] | None:
    """Return the most preferred complete address, else the most preferred one.

    An incomplete address is still returned so the user completes it rather
    than typing the whole address again.
    """
    required = list(required_fields)
    ranked = sorted(addresses, key=lambda a: ADDRESS_PREFERENCE.index(a["kind"]))
    complete = (a for a in ranked if not missing_fields(a, required))
    return next(complete, ranked[0] if ranked else None)
