"""Writes to the address book."""

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from contacts.models import Address, ChannelKind, Contact, ContactAlias, ContactChannel
from contacts.search_columns import contact_columns
from contacts.selectors import contact_names
from household.models import Household
from people_search.engine.indexing import index_after_commit
from people_search.engine.models import Subject


@transaction.atomic
def refresh_search_columns(*, contact_ids: Iterable[int]) -> None:
    """Recompute the derived columns the matching engine reads of the given contacts.

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
        channels = contact.channels.all()
        columns = contact_columns(
            display_name=contact.display_name,
            first_name=contact.first_name,
            last_name=contact.last_name,
            relation=contact.relation,
            aliases=[alias.name for alias in contact.aliases.all()],
            emails=[c.value for c in channels if c.kind == ChannelKind.EMAIL],
            phones=[c.value for c in channels if c.kind == ChannelKind.PHONE],
            region=contact.household.default_region,
        )
        for name, value in columns.items():
            setattr(contact, name, value)
    Contact.objects.bulk_update(
        contacts,
        ["sort_name", "search_text", "match_text", "concepts", "phone_digits"],
    )
    by_household = sorted(contacts, key=lambda contact: contact.household_id)
    for household_id, group in groupby(by_household, key=lambda c: c.household_id):
        index_after_commit(
            household_id=household_id,
            subject=Subject.CONTACT,
            ids=[contact.pk for contact in group],
            load_names=contact_names,
        )


@transaction.atomic
def create_contact(
    *,
    household: Household,
    aliases: Sequence[str] = (),
    channels: Sequence[Mapping[str, Any]] = (),
    addresses: Sequence[Mapping[str, Any]] = (),
    **fields: Any,
) -> Contact:
    """Create a contact with its aliases, channels and addresses.

    Raise a ValidationError whose keys name the bad field, e.g.
    `channels[0].value`, and write nothing.
    """
    contact = Contact(household=household, **fields)
    _validate(contact, prefix="", exclude=["household"])
    contact.save()
    _replace_children(contact, aliases=aliases, channels=channels, addresses=addresses)
    return contact


@transaction.atomic
def update_contact(
    *,
    contact: Contact,
    aliases: Sequence[str],
    channels: Sequence[Mapping[str, Any]],
    addresses: Sequence[Mapping[str, Any]],
    **fields: Any,
) -> Contact:
    """Set a contact's fields and replace its aliases, channels and addresses.

    Raise a ValidationError keyed like create_contact's and write nothing.
    """
    for name, value in fields.items():
        setattr(contact, name, value)
    _validate(contact, prefix="", exclude=["household"])
    contact.save()
    for children in (contact.aliases, contact.channels, contact.addresses):
        children.all().delete()
    _replace_children(contact, aliases=aliases, channels=channels, addresses=addresses)
    return contact


def _replace_children(
    contact: Contact,
    *,
    aliases: Sequence[str],
    channels: Sequence[Mapping[str, Any]],
    addresses: Sequence[Mapping[str, Any]],
) -> None:
    household = contact.household
    errors: dict[str, list[str]] = {}
    rows: list[Any] = []
    for index, name in enumerate(aliases):
        alias = ContactAlias(household=household, contact=contact, name=name)
        errors |= _errors_of(
            alias, f"aliases[{index}]", exclude=["household", "contact"]
        )
        rows.append(alias)
    for index, data in enumerate(channels):
        channel = ContactChannel(household=household, contact=contact, **data)
        errors |= _errors_of(
            channel, f"channels[{index}]", exclude=["household", "contact"]
        )
        rows.append(channel)
    for index, data in enumerate(addresses):
        address = Address(household=household, contact=contact, **data)
        errors |= _errors_of(
            address, f"addresses[{index}]", exclude=["household", "contact"]
        )
        rows.append(address)
    if errors:
        raise ValidationError(errors)
    for row in rows:
        row.save()
    refresh_search_columns(contact_ids=[contact.pk])


def _validate(instance: Any, *, prefix: str, exclude: list[str]) -> None:
    errors = _errors_of(instance, prefix, exclude=exclude)
    if errors:
        raise ValidationError(errors)


def _errors_of(
    instance: Any, prefix: str, *, exclude: list[str]
) -> dict[str, list[str]]:
    """Return the instance's validation errors keyed by `prefix.field`."""
    try:
        instance.full_clean(exclude=exclude, validate_unique=False)
    except ValidationError as error:
        return {
            f"{prefix}.{field}" if prefix else field: messages
            for field, messages in error.message_dict.items()
        }
    return {}
