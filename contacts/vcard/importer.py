"""Import vCard files into a household's address book: match each card and write it."""

import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from tqdm import tqdm

from contacts.documents import (
    FIELDS,
    Document,
    Rule,
    added,
    added_kinds,
    channel_key,
    contact_document,
    document_children,
    keep,
    merge_documents,
    same_fields,
    take,
    take_given,
    with_names_as_aliases,
)
from contacts.merging import merged_vcard_uids
from contacts.models import (
    Address,
    ChannelKind,
    Contact,
    ContactAlias,
    ContactChannel,
    ContactStatus,
)
from contacts.services import (
    CheckedContact,
    check_contact,
    create_checked_contacts,
    update_contact,
)
from contacts.vcard.mapping import Card, read_card, relate_cards
from contacts.vcard.reader import decode, not_a_vcard_file, split_cards
from household.models import Household
from people_search.engine.nicknames import names_agree
from people_search.engine.phones import is_phone_shaped
from people_search.engine.text import fold_name
from people_search.index.models import NameWord, NameWordUse
from yorik.bulk import cyclic_gc_paused
from yorik.statistics import analyze_after_commit

# Files with fewer cards finish before a progress bar would help.
PROGRESS_MIN_CARDS = 200
_IDENTITY_KINDS = (ChannelKind.PHONE, ChannelKind.EMAIL)
# A card is unchanged when its contact would keep every field and its UID.
_COMPARED = (*FIELDS, "vcard_uid")
# The tables an import of cards fills, the words of the names included.
ADDRESS_BOOK_MODELS = (
    Contact,
    ContactAlias,
    ContactChannel,
    Address,
    NameWord,
    NameWordUse,
)


class VCardTooLarge(ValueError):
    """The file is larger than YORIK_VCARD_MAX_BYTES."""


def check_vcard_size(size: int) -> None:
    """Raise VCardTooLarge when a file of `size` bytes is over the configured cap."""
    limit = settings.YORIK_VCARD_MAX_BYTES
    if size > limit:
        raise VCardTooLarge(
            f"The file has {size / 1_048_576:.1f} MB; vCard files of at most "
            f"{limit / 1_048_576:.1f} MB are accepted (YORIK_VCARD_MAX_BYTES)."
        )


@dataclass
class ImportSummary:
    """What an import did.

    Each skipped card has one line in `skipped_cards`, by its number; each
    value dropped from a kept card, and each note about the file (lines read
    in the fallback charset), one in `warnings`. `file_problem` says why an
    import gave no card at all (an empty file, not a vCard file, a timeout).
    The names of the contacts created and updated are listed in the file's
    order, as they are after the import. `written` is True once the import's
    changes are committed.
    """

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped_cards: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    file_problem: str = ""
    created_names: list[str] = field(default_factory=list)
    updated_names: list[str] = field(default_factory=list)
    written: bool = False

    @property
    def problems(self) -> list[str]:
        """Return the skipped cards' lines in the file's order."""
        return list(self.skipped_cards.values())

    @property
    def skipped(self) -> int:
        return len(self.skipped_cards)

    @property
    def changes(self) -> dict[str, Any]:
        """Return what the import changes, as a dry run lists it (JSON-ready)."""
        return {
            "created": self.created_names,
            "updated": self.updated_names,
            "unchanged": self.unchanged,
            "skipped": self.problems,
        }

    @property
    def found(self) -> int:
        return self.created + self.updated + self.unchanged + self.skipped

    def __str__(self) -> str:
        return _(
            "found %(found)d: created %(created)d, updated %(updated)d, "
            "unchanged %(unchanged)d, skipped %(skipped)d"
        ) % {
            "found": self.found,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
        }


class _TimedOut(Exception):
    """The import ran past its timeout."""


class _Deadline:
    """When an import has to stop: `timeout` seconds after it started, or never."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.started = time.monotonic()

    def check(self, number: int, count: int) -> None:
        """Raise _TimedOut at card `number` of `count` once the time is up."""
        if self.timeout is None or time.monotonic() - self.started < self.timeout:
            return
        seconds = self.timeout
        if float(seconds).is_integer():
            seconds = int(seconds)
        raise _TimedOut(
            _(
                "The import took longer than %(seconds)s seconds and was stopped "
                "at card %(number)s of %(count)s."
            )
            % {
                "seconds": number_format(seconds),
                "number": number_format(number, force_grouping=True),
                "count": number_format(count, force_grouping=True),
            }
        )


def import_vcards(
    *,
    household: Household,
    data: bytes,
    dry_run: bool = False,
    show_progress: bool = False,
    timeout: float | None = None,
    expected: dict[str, Any] | None = None,
) -> ImportSummary:
    """Import every card of a vCard file into the household's address book.

    An import still running `timeout` seconds after it started stops at the
    next card, writes nothing and says so in the summary's file_problem.
    With `expected` (the `changes` of a dry run) the import is written only
    when it changes exactly that; otherwise it writes nothing, and its
    summary tells what it would change now.
    """
    try:
        return _import(
            household=household,
            data=data,
            dry_run=dry_run,
            show_progress=show_progress,
            deadline=_Deadline(timeout),
            expected=expected,
        )
    except _TimedOut as stop:
        return ImportSummary(file_problem=str(stop))


def _import(
    *,
    household: Household,
    data: bytes,
    dry_run: bool,
    show_progress: bool,
    deadline: _Deadline,
    expected: dict[str, Any] | None,
) -> ImportSummary:
    """Import the file as import_vcards does; raise _TimedOut past the deadline."""
    check_vcard_size(len(data))
    region, language = household.default_region, household.language
    decoded = decode(data)
    summary = ImportSummary(warnings=decoded.warnings)
    raws = split_cards(decoded.text)
    cards: list[Card] = []
    with cyclic_gc_paused():
        for raw in raws:
            deadline.check(raw.number, len(raws))
            cards.append(
                read_card(
                    raw, region=region, language=language, encoding=decoded.encoding
                )
            )
    if not cards:
        summary.file_problem = not_a_vcard_file(decoded.text)
        return summary
    relate_cards(cards)
    with transaction.atomic():
        book = _AddressBook(household, shared_values=_shared_values(cards))
        progress = tqdm(
            cards,
            desc="vCards",
            unit="card",
            file=sys.stderr,
            disable=not show_progress or len(cards) < PROGRESS_MIN_CARDS,
        )
        for card in progress:
            deadline.check(card.number, len(cards))
            if card.problems:
                summary.skipped_cards[card.number] = card.report(
                    "; ".join(card.problems)
                )
                continue
            summary.warnings += [card.report(dropped) for dropped in card.dropped]
            try:
                outcome, name = book.write(card.contact, named=card.named)
            except ValidationError as error:
                summary.skipped_cards[card.number] = card.report(_describe(error))
                continue
            setattr(summary, outcome, getattr(summary, outcome) + 1)
            if outcome != "unchanged":
                getattr(summary, f"{outcome}_names").append(name)
        book.create_new_contacts()
        analyze_after_commit(ADDRESS_BOOK_MODELS, household_id=household.pk)
        summary.written = not dry_run and expected in (None, summary.changes)
        if not summary.written:
            transaction.set_rollback(True)
    return summary


def _identity_values(contact: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (channel["kind"], channel["value"])
        for channel in contact["channels"]
        if channel["kind"] in _IDENTITY_KINDS
    }


def _shared_values(cards: list[Card]) -> set[tuple[str, str]]:
    """Return the phones and emails more than one card of the file has."""
    counts = Counter(
        value
        for card in cards
        if card.contact and not card.problems
        for value in _identity_values(card.contact)
    )
    return {value for value, count in counts.items() if count > 1}


def _describe(error: ValidationError) -> str:
    if not hasattr(error, "error_dict"):
        return " ".join(error.messages)
    return "; ".join(
        " ".join(messages) if path == "__all__" else f"{path}: {' '.join(messages)}"
        for path, messages in error.message_dict.items()
    )


def _stored(contact: Contact) -> dict[str, Any]:
    """Return a contact in the shape of a read card."""
    return {**contact_document(contact), "vcard_uid": contact.vcard_uid}


def _own_export_uid(ref: str) -> str:
    """Return the UID Yorik's export gives a contact without one of its own."""
    return f"yorik-{ref}"


def _relabelled(stored: dict[str, str], card: dict[str, str]) -> dict[str, str]:
    """Return a stored channel with the card's label, when the card gives one."""
    return {**stored, "label": card["label"] or stored["label"]}


def _card_addresses(
    stored: list[dict[str, str]], card: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Return the card's addresses, then the stored ones of kinds it has none of."""
    return added_kinds(card, stored)


# A card sets what it carries and keeps what it leaves out. A channel the card
# leaves out stays: one phone's export never knows every number another phone
# or a person in Yorik added.
_CARD_RULES: dict[str, Rule] = {
    "relation": take_given,
    "status": take_given,
    "notes": take_given,
    "aliases": take_given,
    "tags": take_given,
    "channels": added(key=channel_key, twin=_relabelled),
    "addresses": _card_addresses,
}
# A card sets these only when it names the contact (`rename`).
_NAME_FIELDS = ("display_name", "first_name", "last_name", "kind")


def _merged(
    stored: Document,
    card: Document,
    *,
    ref: str,
    rename: bool,
    named: bool,
) -> Document:
    """Return the stored contact with what the card carries set on it.

    Without `rename` the contact keeps its names and kind, and the card's
    other name, when it has one (`named`), becomes an alias.
    """
    names = dict.fromkeys(_NAME_FIELDS, take if rename else keep)
    merged = merge_documents(stored, card, names | _CARD_RULES)
    if named and not rename:
        merged = with_names_as_aliases(merged, [card["display_name"]])
    # The UID the export made up for a contact is no UID of its own.
    uid = "" if card["vcard_uid"] == _own_export_uid(ref) else card["vcard_uid"]
    merged["vcard_uid"] = stored["vcard_uid"] or uid
    return merged


class _AddressBook:
    """The household's contacts as the importer matches them, kept current."""

    def __init__(
        self, household: Household, *, shared_values: set[tuple[str, str]]
    ) -> None:
        self.household = household
        self.shared_values = shared_values
        self.contacts: dict[int, dict[str, Any]] = {}
        self.refs: dict[int, str] = {}
        self.by_uid: dict[str, int] = {}
        self.by_value: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.by_name: dict[str, set[int]] = defaultdict(set)
        # Contacts an earlier card of the file created or matched.
        self.taken: set[int] = set()
        contacts = Contact.objects.filter(household=household).prefetch_related(
            *document_children()
        )
        for contact in contacts:
            self.refs[contact.pk] = contact.ref
            self.by_uid[_own_export_uid(contact.ref)] = contact.pk
            self._remember(contact.pk, _stored(contact))
        # A card of a contact merged away updates the contact it was merged into.
        self.by_uid = merged_vcard_uids(household=household) | self.by_uid
        # Contacts to create, by stand-in ids that follow the stored ones as
        # the created contacts' ids will, so matching breaks ties the same.
        self.new: dict[int, CheckedContact] = {}
        self.next_id = max(self.contacts, default=0) + 1

    def _remember(self, contact_id: int, contact: dict[str, Any]) -> None:
        old = self.contacts.get(contact_id)
        if old is not None:
            self.by_uid.pop(old["vcard_uid"], None)
            for value in _identity_values(old):
                self.by_value[value].discard(contact_id)
            self.by_name[fold_name(old["display_name"])].discard(contact_id)
        self.contacts[contact_id] = contact
        if contact["vcard_uid"]:
            self.by_uid[contact["vcard_uid"]] = contact_id
        for value in _identity_values(contact):
            self.by_value[value].add(contact_id)
        self.by_name[fold_name(contact["display_name"])].add(contact_id)

    def write(self, card: dict[str, Any], *, named: bool = True) -> tuple[str, str]:
        """Create or update the card's contact; return created/updated/unchanged
        and the contact's display name as it now is.

        `named` is False when the card's display name stands in for a name
        it lacks. Raise a ValidationError, having changed nothing, when the
        card's contact would not be valid. New contacts are only checked
        here and written together by create_new_contacts.
        """
        contact_id, rename = self._match(card, named=named)
        if contact_id is None:
            row = {**card, "status": card["status"] or ContactStatus.ACTIVE}
            checked = check_contact(household=self.household, **row)
            contact_id = self.next_id
            self.next_id += 1
            self.new[contact_id] = checked
            self.refs[contact_id] = checked.contact.ref
            self.by_uid[_own_export_uid(checked.contact.ref)] = contact_id
            self._remember(contact_id, row)
            self.taken.add(contact_id)
            return "created", row["display_name"]
        stored = self.contacts[contact_id]
        merged = _merged(
            stored, card, ref=self.refs[contact_id], rename=rename, named=named
        )
        self.taken.add(contact_id)
        if same_fields(merged, stored, fields=_COMPARED):
            return "unchanged", stored["display_name"]
        if contact_id in self.new:
            self.new[contact_id] = check_contact(household=self.household, **merged)
        else:
            contact = Contact.objects.prefetch_related("household").get(
                household=self.household, pk=contact_id
            )
            update_contact(contact=contact, **merged)
        self._remember(contact_id, merged)
        return "updated", merged["display_name"]

    def create_new_contacts(self) -> None:
        """Write the contacts the cards created, in the order they were created."""
        if self.new:
            create_checked_contacts(
                household=self.household, checked=list(self.new.values())
            )

    def _match(self, card: dict[str, Any], *, named: bool) -> tuple[int | None, bool]:
        """Return the contact the card is, or None; and whether it names it.

        The second value is True when the card's names may replace the
        contact's: a match by UID or by the same name.
        """
        uid = card["vcard_uid"]
        if uid and uid in self.by_uid:
            return self.by_uid[uid], named

        def eligible(contact_id: int) -> bool:
            stored_uid = self.contacts[contact_id]["vcard_uid"]
            return contact_id not in self.taken and (
                not uid or not stored_uid or stored_uid == uid
            )

        name = fold_name(card["display_name"])
        # A phone or email identifies a person only when one card of the
        # file and one contact of the household have it.
        owners = {
            next(iter(holders))
            for value in _identity_values(card) - self.shared_values
            if len(holders := self.by_value.get(value, set())) == 1
        }
        agreeing = [
            contact_id
            for contact_id in owners
            if eligible(contact_id)
            and (
                not named
                or _unnamed(self.contacts[contact_id])
                or names_agree(
                    self.contacts[contact_id]["display_name"], card["display_name"]
                )
            )
        ]
        if len(agreeing) == 1:
            stored = self.contacts[agreeing[0]]
            rename = named and (
                _unnamed(stored) or fold_name(stored["display_name"]) == name
            )
            return agreeing[0], rename
        if agreeing:
            return None, False
        namesakes = sorted(
            contact_id
            for contact_id in self.by_name.get(name, ())
            if eligible(contact_id)
            and not _conflicting(self.contacts[contact_id], card)
        )
        return (namesakes[0], True) if namesakes else (None, False)


def _unnamed(contact: dict[str, Any]) -> bool:
    """Return whether a contact is named only after its email or phone."""
    display_name = contact["display_name"]
    return not (contact["first_name"] or contact["last_name"]) and (
        "@" in display_name or is_phone_shaped(display_name)
    )


def _conflicting(stored: dict[str, Any], card: dict[str, Any]) -> bool:
    """Return whether both have phones (or emails) and share none of them."""
    for kind in _IDENTITY_KINDS:
        ours = {c["value"] for c in stored["channels"] if c["kind"] == kind}
        theirs = {c["value"] for c in card["channels"] if c["kind"] == kind}
        if ours and theirs and not ours & theirs:
            return True
    return False
