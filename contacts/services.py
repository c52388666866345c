"""Writes to the address book."""

from collections.abc import Iterable

from django.db import transaction

from contacts.models import ChannelKind, Contact
from people_search.names import search_document
from people_search.phones import InvalidPhoneNumber, parse_phone


@transaction.atomic
def refresh_search_columns(*, contact_ids: Iterable[int]) -> None:
    """Recompute the folded search text and phone digits of the given contacts.

    Every write of a contact, its aliases or its channels ends here, so the
    indexed columns the matching engine reads always describe the row.
    """
    contacts = list(
        Contact.objects.filter(pk__in=list(contact_ids))
        .select_related("household")
        .prefetch_related("aliases", "channels")
        .select_for_update(of=("self",))
    )
    for contact in contacts:
        emails = [c.value for c in contact.channels.all() if c.kind == ChannelKind.EMAIL]
        contact.search_text = search_document(
            contact.display_name,
            contact.first_name,
            contact.last_name,
            contact.relation,
            *(alias.name for alias in contact.aliases.all()),
            *emails,
        )
        contact.phone_digits = " ".join(
            _national_digits(channel.value, contact.household.default_region)
            for channel in contact.channels.all()
            if channel.kind == ChannelKind.PHONE
        )
    Contact.objects.bulk_update(contacts, ["search_text", "phone_digits"])


def _national_digits(e164: str, region: str) -> str:
    try:
        return parse_phone(e164, region).nsn
    except InvalidPhoneNumber:
        return ""
