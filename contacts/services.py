"""Writes to the address book."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction

from contacts.models import Address, ChannelKind, Contact, ContactAlias, ContactChannel
from contacts.search_columns import contact_columns
from contacts.selectors import contact_names
from household.models import Household
from people_search.engine.indexing import index_after_commit
from people_search.engine.models import Subject

# Rows per INSERT of a bulk write: few round trips, bounded statements.
BATCH_SIZE = 2000
UPDATE_BATCH_SIZE = 500


@transaction.atomic
def refresh_search_columns(*, contact_ids: Iterable[int]) -> None:
    """Recompute the sort name, search text and phone digits of the given contacts.

    The services set these columns as they write; rows saved around them
    (admin forms and inlines) end here, so the indexed columns the matching
    engine reads always describe the row.
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
    # bulk_update's CASE per column costs rows x batch; small batches keep it linear.
    Contact.objects.bulk_update(
        contacts,
        ["sort_name", "search_text", "phone_digits"],
        batch_size=UPDATE_BATCH_SIZE,
    )
    by_household = sorted(contacts, key=lambda contact: contact.household_id)
    for household_id, group in groupby(by_household, key=lambda c: c.household_id):
        index_after_commit(
            household_id=household_id,
            subject=Subject.CONTACT,
            ids=[contact.pk for contact in group],
            load_names=contact_names,
        )


@dataclass(frozen=True)
class _CheckedContact:
    """A validated contact and its children, every derived column set."""

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
    checked = _checked(
        Contact(household=household, **fields),
        aliases=aliases,
        channels=channels,
        addresses=addresses,
    )
    checked.contact.save()
    _insert_children([checked])
    _index_names([checked.contact], household=household)
    return checked.contact


def validate_contact(
    *,
    household: Household,
    aliases: Sequence[str] = (),
    channels: Sequence[Mapping[str, Any]] = (),
    addresses: Sequence[Mapping[str, Any]] = (),
    **fields: Any,
) -> None:
    """Raise the ValidationError create_contact would raise, without a query."""
    _checked(
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
    problem by row and field, e.g. `[3].channels[0].value`. The database
    still enforces its constraints, such as a ref the household already has.
    Writes a constant number of statements per BATCH_SIZE rows.
    """
    checked: list[_CheckedContact] = []
    errors: dict[str, list[str]] = {}
    seen: dict[str, dict[str, int]] = {"ref": {}, "vcard_uid": {}}
    for index, row in enumerate(rows):
        fields = dict(row)
        children = {
            name: fields.pop(name, ()) for name in ("aliases", "channels", "addresses")
        }
        try:
            checked_contact = _checked(
                Contact(household=household, **fields), **children
            )
        except ValidationError as error:
            errors |= {
                f"[{index}].{path}": messages
                for path, messages in error.message_dict.items()
            }
            continue
        contact = checked_contact.contact
        # The unique constraints of one household, across the rows given here.
        for name, first in seen.items():
            value = getattr(contact, name)
            if value and value in first:
                errors[f"[{index}].{name}"] = [
                    f"{value!r} is also the {name} of row {first[value]}"
                ]
            elif value:
                first[value] = index
        checked.append(checked_contact)
    if errors:
        raise ValidationError(errors)
    contacts = [checked_contact.contact for checked_contact in checked]
    _copy_contacts(contacts)
    _insert_children(checked)
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
    _insert_children([checked])
    _index_names([contact], household=contact.household)
    return contact


def _checked(
    contact: Contact,
    *,
    aliases: Sequence[str],
    channels: Sequence[Mapping[str, Any]],
    addresses: Sequence[Mapping[str, Any]],
) -> _CheckedContact:
    """Return the contact's rows validated and with their derived columns.

    Checks run in Python: field validation and channel normalisation
    (full_clean), and an alias or address kind given twice. The model's
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
    errors |= _repeated(alias_rows, "aliases", "name", "is listed twice")
    errors |= _repeated(address_rows, "addresses", "kind", "more than one {} address")
    if errors:
        raise ValidationError(errors)
    columns = contact_columns(
        display_name=contact.display_name,
        first_name=contact.first_name,
        last_name=contact.last_name,
        relation=contact.relation,
        aliases=[alias.name for alias in alias_rows],
        emails=[c.value for c in channel_rows if c.kind == ChannelKind.EMAIL],
        phones=[c.value for c in channel_rows if c.kind == ChannelKind.PHONE],
        region=household.default_region,
    )
    for name, value in columns.items():
        setattr(contact, name, value)
    return _CheckedContact(contact, alias_rows, channel_rows, address_rows)


def _repeated(
    rows: Sequence[Any], prefix: str, field: str, message: str
) -> dict[str, list[str]]:
    """Return an error for each row whose `field` an earlier row has already."""
    errors = {}
    seen = set()
    for index, row in enumerate(rows):
        value = getattr(row, field)
        if value in seen:
            errors[f"{prefix}[{index}].{field}"] = [message.format(value)]
        seen.add(value)
    return errors


def _copy_contacts(contacts: Sequence[Contact]) -> None:
    """Insert new contacts with COPY, each with an id drawn from the table's sequence.

    bulk_create writes one placeholder per value for this table (its UNNEST
    form skips tables with an array column, and `tags` is one); composing
    those statements took four times as long as COPY's whole insert. COPY
    shows in Django's statement log but passes no execute wrapper.
    """
    if not contacts:
        return
    meta = Contact._meta
    fields = meta.concrete_fields
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) "
            "FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(contacts)],
        )
        # Ascending ids in row order, so export's order by id keeps the rows'.
        ids = sorted(pk for (pk,) in cursor.fetchall())
        for contact, pk in zip(contacts, ids, strict=True):
            contact.pk = pk
        with (
            connection.wrap_database_errors,
            cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy,
        ):
            for contact in contacts:
                # What bulk_create stores: defaults, auto_now and prepared values.
                copy.write_row(
                    [
                        field.get_db_prep_save(
                            field.pre_save(contact, True), connection
                        )
                        for field in fields
                    ]
                )
    for contact in contacts:
        contact._state.adding = False
        contact._state.db = connection.alias


def _insert_children(checked: Sequence[_CheckedContact]) -> None:
    """Insert the aliases, channels and addresses of saved contacts in batches."""
    # Each child holds its contact; bulk_create reads the contact's id from it.
    for model, children in (
        (ContactAlias, [alias for rows in checked for alias in rows.aliases]),
        (ContactChannel, [channel for rows in checked for channel in rows.channels]),
        (Address, [address for rows in checked for address in rows.addresses]),
    ):
        if children:
            model.objects.bulk_create(children, batch_size=BATCH_SIZE)


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
