"""Reads for composing letters: does a recipient have the address a template needs?"""

from dataclasses import dataclass

from compose.models import LetterTemplate
from compose.recipients import recipient_field_label
from contacts.addresses import best_postal_address, missing_fields
from contacts.aggregates import ADDRESS_PARTS, addresses_array
from contacts.models import Contact
from household.models import Household
from yorik.compiled import CompiledQuery


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


# Both run on every check: compiled once, each costs a fifth of building it.
_CONTACT_ADDRESSES = CompiledQuery(
    lambda household_id, contact_id: (
        Contact.objects.filter(household_id=household_id, pk=contact_id)
        .annotate(address_list=addresses_array(household_id))
        .values_list("display_name", "address_list")
    ),
    household_id=int,
    contact_id=int,
)
_RECIPIENT_FIELDS = CompiledQuery(
    lambda household_id, template_id: LetterTemplate.objects.filter(
        household_id=household_id, template_id=template_id
    ).values_list("recipient_fields"),
    household_id=int,
    template_id=str,
)


def check_recipient(
    *, household: Household, contact_id: int, template_id: str
) -> RecipientCheck:
    """Return the contact's best postal address and the fields the template lacks.

    Reads the contact with its addresses in one SELECT and the template in
    another; raise DoesNotExist for a contact or template outside the household.
    """
    contacts = _CONTACT_ADDRESSES.rows(household_id=household.pk, contact_id=contact_id)
    if not contacts:
        raise Contact.DoesNotExist(f"No contact with id {contact_id}.")
    ((display_name, address_list),) = contacts
    templates = _RECIPIENT_FIELDS.rows(
        household_id=household.pk, template_id=template_id
    )
    if not templates:
        raise LetterTemplate.DoesNotExist(f"No letter template {template_id!r}.")
    ((required_fields,),) = templates
    address = best_postal_address(address_list, required_fields)
    missing = [
        MissingField(
            key=field,
            label=recipient_field_label(field, language=household.language),
            required=True,
        )
        for field in missing_fields(address, required_fields)
    ]
    block = {field: address[field] for field in ADDRESS_PARTS} if address else None
    return RecipientCheck(
        complete=not missing,
        address=block,
        missing=missing,
        contact_name=display_name,
    )
