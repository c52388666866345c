"""A letter's recipient block: which postal address to use and what it lacks."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils import translation
from django.utils.translation import pgettext_lazy

from compose.models import RecipientField
from contacts.aggregates import ADDRESS_FIELDS
from contacts.models import AddressKind

ADDRESS_PREFERENCE = (
    AddressKind.HOME,
    AddressKind.WORK,
    AddressKind.BILLING,
    AddressKind.SHIPPING,
)

_LABELS = {
    RecipientField.LINE1: pgettext_lazy("postal address", "Street and number"),
    RecipientField.LINE2: pgettext_lazy("postal address", "Address line 2"),
    RecipientField.POSTCODE: pgettext_lazy("postal address", "Postcode"),
    RecipientField.CITY: pgettext_lazy("postal address", "City"),
    RecipientField.COUNTRY: pgettext_lazy("postal address", "Country"),
}


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


def recipient_field_label(field: str, *, language: str) -> str:
    """Return the label of an address field in the given language."""
    with translation.override(language):
        return str(_LABELS[field])
