"""Writes to the address book."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils.translation import gettext

from contacts.models import Address, ChannelKind, Contact, ContactAlias, ContactChannel
from contacts.search_columns import contact_columns
from contacts.selectors import contact_names
from household.models import Household
from people_search.index.models import Subject
from people_search.index.names import index_after_commit
from yorik.bulk import copy_new_rows, cyclic_gc_paused

# bulk_update's CASE per column costs rows x batch; small batches keep it linear.
UPDATE_BATCH_SIZE = 500


@transaction.atomic
def refresh_search_columns(*, household_id: int, contact_ids: Iterable[int]) -> None:
    """Recompute the derived columns the matching engine reads of the given
    contacts of the household.

    The services set these columns as they write; rows saved around them
    (admin forms and inlines) end here, so the indexed columns the matching
    engine reads always describe the row.
    """
    of_household = {"household_id": household_id}
    contacts = list(
        Contact.objects.filter(pk__in=list(contact_ids), **of_household)
        .prefetch_related("household")
        .prefetch_related(
            Prefetch("aliases", ContactAlias.objects.filter(**of_household)),
            Prefetch("channels", ContactChannel.objects.filter(**of_household)),
        )
        .select_for_update(of=("self",))
    )
    for contact in contacts:
        channels = contact.channels.all()
        columns = contact_columns(
            display_name=contact.display_name,
            first_name=contact.first_name,
            last_name=contact.last_name,
            kind=contact.kind,
            relation=contact.relation,
            aliases=[alias.name for alias in contact.aliases.all()],
            tags=contact.tags,
            emails=[c.value for c in channels if c.kind == ChannelKind.EMAIL],
            region=contact.household.default_region,
            title=contact.title,
            organization=contact.organization,
            **_phones(channels),
        )
        for name, value in columns.items():
            setattr(contact, name, value)
    Contact.objects.filter(**of_household).bulk_update(
        contacts,
        ["sort_name", "search_text", "match_text", "concepts", "phone_digits"],
        batch_size=UPDATE_BATCH_SIZE,
    )
    index_after_commit(
        household_id=household_id,
        subject=Subject.CONTACT,
        ids=[contact.pk for contact in contacts],
        load_names=contact_names,
    )


@dataclass(frozen=True)
class CheckedContact:
    """A contact and its new children, validated, every derived column set."""

    contact: Contact
    aliases: list[ContactAlias]
    channels: list[ContactChannel]
    addresses: list[Address]


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
    checked = check_contact(
        household=household,
        aliases=aliases,
        channels=channels,
        addresses=addresses,
        **fields,
    )
    checked.contact.save()
    _insert_children(checked)
    _index_names([checked.contact], household=household)
    return checked.contact


def check_contact(
    *,
    household: Household,
    aliases: Sequence[str] = (),
    channels: Sequence[Mapping[str, Any]] = (),
    addresses: Sequence[Mapping[str, Any]] = (),
    **fields: Any,
) -> CheckedContact:
    """Return a new contact validated for create_checked_contacts, without a query.

    Raise the ValidationError create_contact would raise.
    """
    return _checked(
        Contact(household=household, **fields),
        aliases=aliases,
        channels=channels,
        addresses=addresses,
    )


@transaction.atomic
def create_contacts(
    *, household: Household, rows: Sequence[Mapping[str, Any]]
) -> list[Contact]:
    """Create many contacts with their aliases, channels and addresses at once.

    Each row holds create_contact's keyword arguments. Every row is checked
    in Python before anything is written; a ValidationError keys each
    problem by row and field, e.g. `[3].channels[0].value`.
    """
    with cyclic_gc_paused():
        checked: list[CheckedContact] = []
        errors: dict[str, list[str]] = {}
        for index, row in enumerate(rows):
            try:
                checked.append(check_contact(household=household, **row))
            except ValidationError as error:
                errors |= _in_row(index, error)
        if errors:
            raise ValidationError(errors)
        return create_checked_contacts(household=household, checked=checked)


@transaction.atomic
def create_checked_contacts(
    *, household: Household, checked: Sequence[CheckedContact]
) -> list[Contact]:
    """Create contacts check_contact returned, in their order; return them saved.

    A ref or vCard UID given twice is a ValidationError keyed by position,
    e.g. `[3].ref`, and nothing is written. The database enforces the other
    constraints, such as a ref the household already has. Each table is
    written by one COPY (yorik.bulk.copy_new_rows); names are indexed once
    after commit.
    """
    contacts = [checked_contact.contact for checked_contact in checked]
    if any(contact.household_id != household.pk for contact in contacts):
        raise ValueError("Every contact must be checked for this household.")
    errors: dict[str, list[str]] = {}
    for name in ("ref", "vcard_uid"):
        first: dict[str, int] = {}
        for index, contact in enumerate(contacts):
            value = getattr(contact, name)
            if value in first:
                errors[f"[{index}].{name}"] = [
                    gettext("%(value)s is also the %(field)s of row %(row)d")
                    % {"value": repr(value), "field": name, "row": first[value]}
                ]
            elif value:
                first[value] = index
    if errors:
        raise ValidationError(dict(sorted(errors.items(), key=_row_of)))
    with cyclic_gc_paused():
        copy_new_rows(contacts)
        for children in _children_of(checked):
            copy_new_rows(children)
    _index_names(contacts, household=household)
    return contacts


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
    checked = _checked(contact, aliases=aliases, channels=channels, addresses=addresses)
    contact.save()
    for children in (contact.aliases, contact.channels, contact.addresses):
        children.all().delete()
    _insert_children(checked)
    _index_names([contact], household=contact.household)
    return contact


def _in_row(index: int, error: ValidationError) -> dict[str, list[str]]:
    """Return a row's errors keyed by their path in the rows: `[3].kind`."""
    return {
        f"[{index}].{path}": messages for path, messages in error.message_dict.items()
    }


def _row_of(item: tuple[str, list[str]]) -> int:
    return int(item[0][1 : item[0].index("]")])


def _checked(
    contact: Contact,
    *,
    aliases: Sequence[str],
    channels: Sequence[Mapping[str, Any]],
    addresses: Sequence[Mapping[str, Any]],
) -> CheckedContact:
    """Return the contact's rows validated and with their derived columns.

    Checks run in Python: field validation and channel normalisation
    (full_clean), and an alias given twice. The model's
    check constraints restate the field rules, so they are not queried;
    the database enforces them and every unique constraint.
    """
    _validate(contact, prefix="", exclude=["household"])
    household = contact.household
    errors: dict[str, list[str]] = {}
    alias_rows = []
    for index, name in enumerate(aliases):
        alias = ContactAlias(household=household, contact=contact, name=name)
        errors |= _errors_of(
            alias, f"aliases[{index}]", exclude=["household", "contact"]
        )
        alias_rows.append(alias)
    channel_rows = []
    for index, data in enumerate(channels):
        channel = ContactChannel(household=household, contact=contact, **data)
        errors |= _errors_of(
            channel, f"channels[{index}]", exclude=["household", "contact"]
        )
        channel_rows.append(channel)
    address_rows = []
    for index, data in enumerate(addresses):
        address = Address(household=household, contact=contact, **data)
        errors |= _errors_of(
            address, f"addresses[{index}]", exclude=["household", "contact"]
        )
        address_rows.append(address)
    errors |= _repeated(
        alias_rows, "aliases", "name", lambda alias: gettext("is listed twice")
    )
    if errors:
        raise ValidationError(errors)
    columns = contact_columns(
        display_name=contact.display_name,
        first_name=contact.first_name,
        last_name=contact.last_name,
        kind=contact.kind,
        relation=contact.relation,
        aliases=[alias.name for alias in alias_rows],
        tags=contact.tags,
        emails=[c.value for c in channel_rows if c.kind == ChannelKind.EMAIL],
        region=household.default_region,
        title=contact.title,
        organization=contact.organization,
        **_phones(channel_rows),
    )
    for name, value in columns.items():
        setattr(contact, name, value)
    return CheckedContact(contact, alias_rows, channel_rows, address_rows)


def _phones(channels: Iterable[ContactChannel]) -> dict[str, list[str]]:
    """Return contact_columns' phones: E.164 ones, and those kept as written."""
    phones = [c for c in channels if c.kind == ChannelKind.PHONE]
    return {
        "phones": [c.value for c in phones if not c.as_written],
        "written_phones": [c.value for c in phones if c.as_written],
    }


def _repeated(
    rows: Sequence[Any], prefix: str, field: str, message: Callable[[Any], str]
) -> dict[str, list[str]]:
    """Return an error for each row whose `field` an earlier row has already.

    `message` says it of the row, in the active language.
    """
    errors = {}
    seen = set()
    for index, row in enumerate(rows):
        value = getattr(row, field)
        if value in seen:
            errors[f"{prefix}[{index}].{field}"] = [message(row)]
        seen.add(value)
    return errors


def _children_of(
    checked: Sequence[CheckedContact],
) -> tuple[list[ContactAlias], list[ContactChannel], list[Address]]:
    """Return the contacts' aliases, channels and addresses, each in row order.

    Each child holds its contact, whose id it takes once the contact is saved.
    """
    return (
        [alias for rows in checked for alias in rows.aliases],
        [channel for rows in checked for channel in rows.channels],
        [address for rows in checked for address in rows.addresses],
    )


def _insert_children(checked: CheckedContact) -> None:
    """Insert the aliases, channels and addresses of one saved contact."""
    for children in _children_of([checked]):
        if children:
            type(children[0]).objects.bulk_create(children)


def _index_names(contacts: Sequence[Contact], *, household: Household) -> None:
    index_after_commit(
        household_id=household.pk,
        subject=Subject.CONTACT,
        ids=[contact.pk for contact in contacts],
        load_names=contact_names,
    )


def _validate(instance: Any, *, prefix: str, exclude: list[str]) -> None:
    errors = _errors_of(instance, prefix, exclude=exclude)
    if errors:
        raise ValidationError(errors)


def _errors_of(
    instance: Any, prefix: str, *, exclude: list[str]
) -> dict[str, list[str]]:
    """Return the instance's validation errors keyed by `prefix.field`.

    Constraints are left to the database: its check constraints restate the
    field choices and blank rules, and querying them would cost a statement
    each for every row.
    """
    try:
        instance.full_clean(
            exclude=exclude, validate_unique=False, validate_constraints=False
        )
    except ValidationError as error:
        return {
            f"{prefix}.{field}" if prefix else field: messages
            for field, messages in error.message_dict.items()
        }
    return {}
