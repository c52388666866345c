"""Reads for composing letters: does a recipient have the address a template needs?"""

from dataclasses import dataclass

from compose.models import LetterTemplate
from compose.recipients import recipient_field_label
from contacts.addresses import best_postal_address, missing_fields
from contacts.aggregates import ADDRESS_FIELDS, addresses_array
from contacts.models import Contact
from household.models import Household


@dataclass(frozen=True)
class MissingField:
    """An address field the user still has to give."""

    key: str
    label: str
    required: bool


@dataclass(frozen=True)
class RecipientCheck:
    """Whether a contact's postal address fills a template's recipient block."""

    complete: bool
    address: dict[str, str] | None
    missing: list[MissingField]
    contact_name: str


def check_recipient(
    *, household: Household, contact_id: int, template_id: str
) -> RecipientCheck:
    """Return the contact's best postal address and the fields the template lacks.

    Reads the contact with its addresses in one SELECT and the template in
    another; raise DoesNotExist for a contact or template outside the household.
    """
    try:
        contact = (
            Contact.objects.filter(household=household, pk=contact_id)
            .annotate(address_list=addresses_array())
            .values("display_name", "address_list")
            .get()
        )
    except Contact.DoesNotExist:
        raise Contact.DoesNotExist(f"No contact with id {contact_id}.") from None
    try:
        required_fields = (
            LetterTemplate.objects.filter(household=household, template_id=template_id)
            .values_list("recipient_fields", flat=True)
            .get()
        )
    except LetterTemplate.DoesNotExist:
        raise LetterTemplate.DoesNotExist(
            f"No letter template {template_id!r}."
        ) from None
    address = best_postal_address(contact["address_list"], required_fields)
    missing = [
        MissingField(
            key=field,
            label=recipient_field_label(field, language=household.language),
            required=True,
        )
        for field in missing_fields(address, required_fields)
    ]
    block = {field: address[field] for field in ADDRESS_FIELDS} if address else None
    return RecipientCheck(
        complete=not missing,
        address=block,
        missing=missing,
        contact_name=contact["display_name"],
    )
