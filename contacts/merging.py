"""Merge two contacts into one, remember the merged one, and dismiss non-duplicates.

A merge keeps the survivor and deletes the other contact in one transaction.
What the merged contact was known by (its ref, vCard UID and id) stays in a
ContactMerge row of the survivor, so a later vCard import, a card or a link
naming it finds the survivor. The row's choices also keep both contacts as
they were, and what moved from the one to the other, so the merge can be
undone for a while (UNDO_WINDOW).
"""

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from contacts.documents import (
    SCALAR_FIELDS,
    Rule,
    channel_key,
    combined,
    contact_document,
    document_children,
    fill,
    joined,
    merge_documents,
    take_given,
    with_names_as_aliases,
)
from contacts.models import (
    Address,
    AddressKind,
    CardDavCard,
    Contact,
    ContactAlias,
    ContactMerge,
    DismissedDuplicate,
)
from contacts.services import create_contact, update_contact
from household.models import Household
from people_search.engine.text import fold_name
from people_search.index.models import Subject
from people_search.index.names import store_name_words
from yorik.models import Card

# The contact's own fields an admin chooses between when both have a value;
# notes are joined, never chosen.
CHOSEN_FIELDS = tuple(field for field in SCALAR_FIELDS if field != "notes")
# Addresses are chosen kind by kind: "address:home", "address:work", ….
ADDRESS_CHOICES = tuple(f"address:{kind}" for kind in AddressKind.values)
# The prefix of a vCard UID export_vcard gives a contact without one.
EXPORTED_UID_PREFIX = "yorik-"
# How long after a merge its admin may undo it, while the survivor is unchanged.
UNDO_WINDOW = timedelta(minutes=30)


class MergeRefused(ValueError):
    """The two contacts cannot be merged (the same one, or two households)."""


@dataclass(frozen=True)
class FieldChoice:
    """One field of a pair side by side: each contact's value, and if they differ."""

    name: str
    first: Any
    second: Any

    @property
    def label(self) -> str:
        return field_label(self.name)

    @property
    def differs(self) -> bool:
        return bool(self.first) and bool(self.second) and self.first != self.second


def field_label(name: str) -> str:
    """Return a chosen field's name for people, in the active language.

    `name` is one of CHOSEN_FIELDS or ADDRESS_CHOICES: "relation" reads
    "Beziehung", "address:home" "Adresse (Privat)" in German.
    """
    if name.startswith("address:"):
        kind = AddressKind(name.removeprefix("address:"))
        return f"{Address._meta.verbose_name} ({kind.label})"
    return str(Contact._meta.get_field(name).verbose_name)


def merge_choices(first: Contact, second: Contact) -> list[FieldChoice]:
    """Return the chosen fields and address kinds of two contacts side by side."""
    rows = [
        FieldChoice(name, _shown(first, name), _shown(second, name))
        for name in CHOSEN_FIELDS
    ]
    for kind in AddressKind.values:
        rows.append(
            FieldChoice(
                f"address:{kind}",
                _addresses_text(first, kind),
                _addresses_text(second, kind),
            )
        )
    return rows


@transaction.atomic
def merge_contacts(
    *,
    survivor: Contact,
    merged: Contact,
    take_from_merged: Collection[str] = (),
    merged_by: str = "",
) -> ContactMerge:
    """Merge `merged` into `survivor` and delete it; return the merge's record.

    Fields named in `take_from_merged` (CHOSEN_FIELDS and ADDRESS_CHOICES)
    take the merged contact's value where it has one; every other field keeps
    the survivor's, or takes the merged contact's where the survivor has none.
    Aliases, tags, web addresses, channels and the addresses of other kinds
    are combined
    without repeats, the merged contact's name becoming an alias; notes are
    joined; the later last_contacted_at is kept. Picks on cards move to the
    survivor, and so do the records of contacts merged into `merged` before.
    Raise MergeRefused, or a ValidationError of the combined contact, and
    change nothing.
    """
    if survivor.pk == merged.pk or survivor.household_id != merged.household_id:
        raise MergeRefused("Only two contacts of one household can be merged.")
    unknown = set(take_from_merged) - {*CHOSEN_FIELDS, *ADDRESS_CHOICES}
    if unknown:
        raise ValidationError({"take_from_merged": f"unknown fields {sorted(unknown)}"})
    locked = Contact.objects.select_for_update().filter(
        pk__in=[survivor.pk, merged.pk], household_id=survivor.household_id
    )
    contacts = {
        contact.pk: contact
        for contact in locked.prefetch_related("household", *document_children())
    }
    if len(contacts) != 2:
        raise MergeRefused("Only two contacts of one household can be merged.")
    keep, gone = contacts[survivor.pk], contacts[merged.pk]
    household_id = keep.household_id
    dismissals = _dismissals_of(household_id=household_id, contact_id=gone.pk)
    merged_record = ContactMerge(
        household_id=household_id,
        survivor=keep,
        merged_contact_id=gone.pk,
        ref=gone.ref,
        vcard_uid=gone.vcard_uid,
        display_name=gone.display_name,
        merged_by=merged_by,
        merged_at=timezone.now(),
        choices={
            "taken_from_merged": sorted(take_from_merged),
            # What undo_merge restores.
            "survivor_before": _as_it_was(keep),
            "merged_before": _as_it_was(gone),
            "moved_merges": list(
                ContactMerge.objects.filter(
                    household_id=household_id, survivor_id=gone.pk
                ).values_list("pk", flat=True)
            ),
            "moved_picks": [
                str(pk)
                for pk in Card.objects.filter(
                    household_id=household_id, picked_contact_id=gone.pk
                ).values_list("pk", flat=True)
            ],
            "carddav_cards": list(
                CardDavCard.objects.filter(
                    household_id=household_id, contact_id=gone.pk
                ).values_list("pk", flat=True)
            ),
            "dismissals": dismissals,
        },
    )
    document = merge_documents(
        contact_document(keep), contact_document(gone), _rules(take_from_merged)
    )
    document = with_names_as_aliases(document, [keep.display_name, gone.display_name])
    name = fold_name(document["display_name"])
    longest = ContactAlias._meta.get_field("name").max_length
    document["aliases"] = [
        alias
        for alias in document["aliases"]
        if fold_name(alias) != name and len(alias) <= longest
    ]
    last_contacted_at = max(
        (d for d in (keep.last_contacted_at, gone.last_contacted_at) if d),
        default=None,
    )
    # What points at the merged contact moves before it is deleted, which
    # would null the picks and delete the records and dismissals naming it.
    ContactMerge.objects.filter(
        household_id=keep.household_id, survivor_id=gone.pk
    ).update(survivor=keep)
    Card.objects.filter(
        household_id=keep.household_id, picked_contact_id=gone.pk
    ).update(picked_contact=keep)
    merged_record.choices["added_dismissals"] = _move_dismissals(
        household_id=household_id, dismissals=dismissals, keep=keep
    )
    # Deleted before the survivor is written: its ref and vCard UID are free.
    gone.delete()
    store_name_words(
        household_id=keep.household_id, subject=Subject.CONTACT, names={gone.pk: None}
    )
    update_contact(contact=keep, last_contacted_at=last_contacted_at, **document)
    merged_record.choices["survivor_written_at"] = keep.updated_at.isoformat()
    merged_record.save()
    return merged_record


def undoable_merge(*, merge_id: int, merged_by: str) -> ContactMerge | None:
    """Return the merge this admin may still undo, or None.

    Only their own merge, within UNDO_WINDOW, while the survivor is as the
    merge left it: an edit since would be lost.
    """
    merge = (
        ContactMerge.objects.select_related("survivor")
        .filter(
            pk=merge_id,
            merged_by=merged_by,
            merged_at__gt=timezone.now() - UNDO_WINDOW,
        )
        .first()
    )
    if merge is None or "merged_before" not in merge.choices:
        return None
    written_at = merge.choices.get("survivor_written_at")
    if merge.survivor.updated_at.isoformat() != written_at:
        return None
    return merge


@transaction.atomic
def undo_merge(*, merge: ContactMerge) -> tuple[Contact, Contact]:
    """Give both contacts of a merge back as they were; return (survivor, merged).

    The merged contact comes back with its id, ref and vCard UID, so cards
    and links naming it find it again; the picks, earlier merges and CardDAV
    cards that moved to the survivor move back, and so do the pairs dismissed
    with the merged contact (the survivor's copies of them go; a pair whose
    other contact is gone since stays gone). Raise MergeRefused when the
    merged contact's ref or vCard UID has been taken since.
    """
    survivor = Contact.objects.select_for_update().get(
        household_id=merge.household_id, pk=merge.survivor_id
    )
    before = merge.choices
    household_id = merge.household_id
    try:
        with transaction.atomic():
            restored = create_contact(
                household=survivor.household,
                id=merge.merged_contact_id,
                ref=merge.ref,
                vcard_uid=merge.vcard_uid,
                **_restorable(before["merged_before"]),
            )
    except IntegrityError as error:
        raise MergeRefused(
            _("The merged contact's ref or vCard UID has been taken since.")
        ) from error
    Contact.objects.filter(household_id=household_id, pk=restored.pk).update(
        created_at=before["merged_before"]["created_at"]
    )
    update_contact(contact=survivor, **_restorable(before["survivor_before"]))
    ContactMerge.objects.filter(
        household_id=household_id, pk__in=before["moved_merges"]
    ).update(survivor=restored)
    Card.objects.filter(household_id=household_id, pk__in=before["moved_picks"]).update(
        picked_contact=restored
    )
    CardDavCard.objects.filter(
        household_id=household_id, pk__in=before["carddav_cards"], contact=None
    ).update(contact=restored)
    DismissedDuplicate.objects.filter(
        household_id=household_id, pk__in=before.get("added_dismissals", [])
    ).delete()
    _dismiss_again(
        household_id=household_id,
        contact_id=restored.pk,
        dismissals=before.get("dismissals", []),
    )
    merge.delete()
    return survivor, restored


def contact_origin(contact: Contact) -> str:
    """Return where a contact came from, for an admin choosing between two.

    A CardDAV sync keeps the card it came from; a vCard import, its UID;
    the admin logs what was added by hand. Anything else came with a
    household file or through the assistant.
    """
    if contact.carddav_cards.exists():
        return str(_("CardDAV"))
    if contact.vcard_uid:
        return str(_("vCard import"))
    added_by_hand = LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Contact),
        object_id=str(contact.pk),
        action_flag=ADDITION,
    ).exists()
    if added_by_hand:
        return str(_("entered by hand"))
    return str(_("household import"))


def survivor_ids(*, household: Household, contact_ids: Iterable[int]) -> dict[int, int]:
    """Return, for each id among these of a contact merged away, its survivor's id."""
    return dict(
        ContactMerge.objects.filter(
            household=household, merged_contact_id__in=list(contact_ids)
        ).values_list("merged_contact_id", "survivor_id")
    )


def merged_vcard_uids(*, household: Household) -> dict[str, int]:
    """Return the vCard UIDs of merged-away contacts, each with its survivor's id.

    A contact exported without a UID was given `yorik-<ref>`; that one counts too.
    """
    uids: dict[str, int] = {}
    for ref, uid, survivor_id in ContactMerge.objects.filter(
        household=household
    ).values_list("ref", "vcard_uid", "survivor_id"):
        uids[f"{EXPORTED_UID_PREFIX}{ref}"] = survivor_id
        if uid:
            uids[uid] = survivor_id
    return uids


@transaction.atomic
def dismiss_duplicate(
    *, first: Contact, second: Contact, dismissed_by: str = ""
) -> DismissedDuplicate:
    """Remember that two contacts are not the same person; never propose them again."""
    if first.pk == second.pk or first.household_id != second.household_id:
        raise MergeRefused("Only two contacts of one household can be told apart.")
    low, high = sorted((first, second), key=lambda contact: contact.pk)
    dismissal, _ = DismissedDuplicate.objects.get_or_create(
        household_id=low.household_id,
        first=low,
        second=high,
        defaults={
            "dismissed_by": dismissed_by,
            "dismissed_at": timezone.now(),
        },
    )
    return dismissal


def _dismissals_of(*, household_id: int, contact_id: int) -> list[dict[str, Any]]:
    """Return the pairs dismissed with a contact: the other contact, who
    dismissed the pair and when."""
    dismissals = DismissedDuplicate.objects.filter(household_id=household_id).filter(
        Q(first_id=contact_id) | Q(second_id=contact_id)
    )
    return [
        {
            "other": (
                dismissal.second_id
                if dismissal.first_id == contact_id
                else dismissal.first_id
            ),
            "dismissed_by": dismissal.dismissed_by,
            "dismissed_at": dismissal.dismissed_at.isoformat(),
        }
        for dismissal in dismissals.order_by("pk")
    ]


def _move_dismissals(
    *, household_id: int, dismissals: list[dict[str, Any]], keep: Contact
) -> list[int]:
    """Keep the merged contact's dismissed pairs as the survivor's; return
    the ids of the pairs the survivor did not have."""
    added = []
    for dismissal in dismissals:
        if dismissal["other"] == keep.pk:
            continue
        pair, created = _dismiss(
            household_id=household_id, contact_id=keep.pk, dismissal=dismissal
        )
        if created:
            added.append(pair.pk)
    return added


def _dismiss_again(
    *, household_id: int, contact_id: int, dismissals: list[dict[str, Any]]
) -> None:
    """Dismiss a contact's pairs as they were, with the others still here."""
    others = set(
        Contact.objects.filter(
            household_id=household_id,
            pk__in=[dismissal["other"] for dismissal in dismissals],
        ).values_list("pk", flat=True)
    )
    for dismissal in dismissals:
        if dismissal["other"] in others:
            _dismiss(
                household_id=household_id, contact_id=contact_id, dismissal=dismissal
            )


def _dismiss(
    *, household_id: int, contact_id: int, dismissal: dict[str, Any]
) -> tuple[DismissedDuplicate, bool]:
    """Dismiss the contact with the other of a `_dismissals_of` pair, as that
    pair was dismissed; return the pair and whether it is new."""
    low, high = sorted((contact_id, dismissal["other"]))
    return DismissedDuplicate.objects.get_or_create(
        household_id=household_id,
        first_id=low,
        second_id=high,
        defaults={
            "dismissed_by": dismissal["dismissed_by"],
            "dismissed_at": datetime.fromisoformat(dismissal["dismissed_at"]),
        },
    )


def _as_it_was(contact: Contact) -> dict[str, Any]:
    """Return what undo_merge needs to write a contact back as it is now."""
    return {
        **contact_document(contact),
        "last_contacted_at": (
            contact.last_contacted_at.isoformat() if contact.last_contacted_at else None
        ),
        "created_at": contact.created_at.isoformat(),
    }


def _restorable(before: dict[str, Any]) -> dict[str, Any]:
    """Return a contact as _as_it_was kept it, as the services take it."""
    fields = {key: value for key, value in before.items() if key != "created_at"}
    return fields


def _rules(take_from_merged: Collection[str]) -> dict[str, Rule]:
    """Return how each field of the survivor merges with the merged contact's.

    A chosen field or address kind takes the merged contact's value where it
    has one, any other keeps the survivor's where it has one; addresses come
    in the order of their kinds. Aliases, tags, web addresses and channels
    are combined, the notes joined.
    """

    def chosen(name: str) -> Rule:
        return take_given if name in take_from_merged else fill

    return {
        **{name: chosen(name) for name in CHOSEN_FIELDS},
        **{
            f"addresses.{kind}": chosen(f"address:{kind}")
            for kind in AddressKind.values
        },
        "tags": combined(),
        "urls": combined(),
        "notes": joined,
        "aliases": combined(key=fold_name),
        "channels": combined(key=channel_key),
    }


def _shown(contact: Contact, name: str) -> Any:
    """Return a field's value as people read it: a choice by its label."""
    field = Contact._meta.get_field(name)
    value = getattr(contact, name)
    return dict(field.flatchoices).get(value, value) if field.choices else value


def _addresses_text(contact: Contact, kind: str) -> str:
    """Return a contact's addresses of one kind, several joined by semicolons."""
    return "; ".join(str(a) for a in contact.addresses.all() if a.kind == kind)
