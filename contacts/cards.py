"""The address book's cards: contact_picker (ranked or not) and contacts_found."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from django.core.paginator import Paginator
from django.db.models import QuerySet

from contacts.merging import survivor_ids
from contacts.models import Contact
from contacts.selectors import (
    MemberPickerRow,
    PickerRow,
    browse_contacts,
    contacts_with_ids,
    find_contact,
    search_contacts,
    statuses_for,
)
from household.models import Membership, UserProfile
from household.selectors import members_of_profiles
from people_search.engine.query import parse_query
from people_search.engine.text import holding_every_term, search_document
from yorik.callers import Caller
from yorik.cards import CardType, card_search, card_type
from yorik.models import Card

CONTACT_PICKER = "contact_picker"
CONTACTS_FOUND = "contacts_found"
# An alphabetical card shows its contacts in pages of this many.
LETTERS_PAGE = 200
# A ranked row's confidence is shown as the first band it reaches: words and
# a bar, never a bare percentage the assistant's guess would not support.
CONFIDENCE_BANDS = ((0.9, "very-likely"), (0.6, "likely"), (0.3, "maybe"))
LOWEST_BAND = "long-shot"
# find_person's match for a row found by a name spelled alike.
SIMILAR_NAME = "similar_name"
# A picker longer than this offers a search field over its rows.
SEARCHABLE_ROWS = 20
# A stored pick of this source names a household member, not a contact.
HOUSEHOLD = "household"


def picker_payload(
    query: str, rows: Sequence[PickerRow | MemberPickerRow], *, ranked: bool
) -> dict[str, Any]:
    """Return what a contact_picker card stores: the query and its rows' ids."""
    return {
        "query": query,
        "ranked": ranked,
        "picks": [row.as_payload() for row in rows],
    }


def card_contacts(card: Card) -> QuerySet[Contact]:
    """Return the contacts the card may show, read from its household now.

    A contact deleted since the card was emitted is simply not there, and the
    household filter keeps any other household's contact out.
    """
    if card.kind == CONTACTS_FOUND:
        return browse_contacts(
            household=card.household,
            statuses=statuses_for(card.payload.get("status", "any")),
            kind=card.payload.get("kind"),
        )
    return contacts_with_ids(
        household=card.household, contact_ids=picked_ids(card).values()
    )


def picked_ids(card: Card) -> dict[int, int]:
    """Return each contact id the card's picks name, with the id to show for it.

    A contact merged into another since the card was emitted is shown, and
    picked, as the contact it was merged into.
    """
    ids = [
        pick["contact_id"]
        for pick in card.payload.get("picks", [])
        if pick.get("source") != HOUSEHOLD
    ]
    survivors = survivor_ids(household=card.household, contact_ids=ids)
    return {contact_id: survivors.get(contact_id, contact_id) for contact_id in ids}


@dataclass(frozen=True)
class CardRow:
    """A contact as a card shows it, with the ranking the assistant gave it."""

    contact: Contact
    confidence: float | None = None
    reason: str = ""
    padded: bool = False
    match: str = ""

    @property
    def name(self) -> str:
        return self.contact.display_name

    @property
    def confidence_band(self) -> str | None:
        """Return the band the confidence falls in, or None for an unranked row."""
        if self.confidence is None:
            return None
        return next(
            (band for floor, band in CONFIDENCE_BANDS if self.confidence >= floor),
            LOWEST_BAND,
        )

    @property
    def search_text(self) -> str:
        """Return the folded text a card's search field filters the row by."""
        return search_document(self.contact.display_name, self.contact.relation)

    @property
    def letter(self) -> str:
        """Return the index letter: the folded name's first letter, or "#"."""
        first = self.contact.sort_name[:1].upper()
        return first if first.isalpha() else "#"


@dataclass(frozen=True)
class MemberRow:
    """A household member on a picker, found by find_person like the contacts."""

    membership: Membership
    match: str = ""
    padded = False

    @property
    def profile(self) -> UserProfile:
        return self.membership.profile

    @property
    def name(self) -> str:
        return str(self.profile)

    @property
    def search_text(self) -> str:
        """Return the folded text a card's search field filters the row by."""
        return search_document(self.name)


def read_picker_rows(card: Card) -> list[CardRow | MemberRow]:
    """Return the rows of a contact picker in the order it shows them.

    A household member no longer live in the household is left out, as a
    deleted contact is.
    """
    picks = card.payload.get("picks", [])
    ids = picked_ids(card)
    contacts = contacts_with_ids(household=card.household, contact_ids=ids.values())
    shown = contacts.prefetch_related("channels").in_bulk()
    members = members_of_profiles(
        household=card.household,
        profile_ids=[
            pick["user_id"] for pick in picks if pick.get("source") == HOUSEHOLD
        ],
    )
    rows: list[CardRow | MemberRow] = []
    for pick in picks:
        if pick.get("source") == HOUSEHOLD:
            membership = members.get(pick["user_id"])
            if membership is not None:
                rows.append(
                    MemberRow(membership=membership, match=pick.get("match", ""))
                )
            continue
        contact = shown.get(ids[pick["contact_id"]])
        # Two picks merged into one contact show it once.
        if contact is None or any(
            isinstance(row, CardRow) and row.contact.pk == contact.pk for row in rows
        ):
            continue
        rows.append(
            CardRow(
                contact=contact,
                confidence=pick.get("confidence"),
                reason=pick.get("reason", ""),
                padded=pick.get("padded", False),
                match=pick.get("match", ""),
            )
        )
    return rows


@dataclass(frozen=True)
class LetterGroup:
    """The rows under one letter of an alphabetical card's index."""

    letter: str
    rows: list[CardRow]

    @property
    def anchor(self) -> str:
        return "letter-other" if self.letter == "#" else f"letter-{self.letter}"


def group_by_letter(rows: Iterable[CardRow]) -> list[LetterGroup]:
    """Return the rows under their index letters, letters in first-seen order."""
    groups: dict[str, list[CardRow]] = {}
    for row in rows:
        groups.setdefault(row.letter, []).append(row)
    return [LetterGroup(letter, letter_rows) for letter, letter_rows in groups.items()]


def _rows_context(
    card: Card, reader: Caller, params: Mapping[str, str]
) -> dict[str, Any]:
    """Show a picker's rows, found by its search (`q`) when it has one.

    `change` asks to answer an answered card again (its link still lives).
    """
    rows = read_picker_rows(card)
    changing = card.picked_at is not None and params.get("change") == "1"
    searchable = len(rows) > SEARCHABLE_ROWS
    search = card_search(params) if searchable else ""
    shown = holding_every_term(rows, search, document=attrgetter("search_text"))
    picks = [row for row in shown if not row.padded]
    all_picks = [row for row in rows if not row.padded]
    return {
        "rows": rows,
        "picks": picks,
        # When only names spelled alike were found, the header offers the
        # first of them instead of repeating the mistyped query.
        "did_you_mean": (
            all_picks[0].name
            if all_picks and all(row.match == SIMILAR_NAME for row in all_picks)
            else ""
        ),
        "padding": [row for row in shown if row.padded],
        # A ranked row explains itself with its reason; others show how to
        # reach the contact.
        "show_channel": not card.payload.get("ranked", False),
        "searchable": searchable,
        "search": search,
        "found_nothing": bool(search) and not shown,
        "changing": changing,
        "can_change": card.pick_to_chat and card.picked_at is not None and not changing,
    }


def _letters_context(
    card: Card, reader: Caller, params: Mapping[str, str]
) -> dict[str, Any]:
    """Show one page of the alphabetical list, grouped under its letters.

    `q` narrows the list to the contacts the matching engine finds for it,
    as the contact pages do; the card's script filters the shown rows as the
    person types, and the same search works as a plain GET without it.
    """
    fields = ("id", "display_name", "relation", "kind", "sort_name")
    search = card_search(params)
    contacts = card_contacts(card)
    if search:
        contacts = search_contacts(
            household=card.household,
            query=parse_query(search, region=card.household.default_region),
            statuses=statuses_for(card.payload.get("status", "any")),
            kind=card.payload.get("kind"),
        ).order_by("sort_name", "pk")
    page = Paginator(contacts.only(*fields), LETTERS_PAGE).get_page(params.get("page"))
    rows = [CardRow(contact=contact) for contact in page.object_list]
    return {
        "rows": rows,
        "count": page.paginator.count,
        "page": page,
        "groups": group_by_letter(rows),
        "search": search,
        "found_nothing": bool(search) and not rows,
    }


def _pick(card: Card, contact_id: int) -> Contact | None:
    survivor = survivor_ids(household=card.household, contact_ids=[contact_id])
    return card_contacts(card).filter(pk=survivor.get(contact_id, contact_id)).first()


def _pick_member(card: Card, user_id: int) -> UserProfile | None:
    """Return the member a pick names if the card lists them and they are live."""
    listed = any(
        pick.get("source") == HOUSEHOLD and pick["user_id"] == user_id
        for pick in card.payload.get("picks", [])
    )
    if not listed:
        return None
    membership = members_of_profiles(household=card.household, profile_ids=[user_id])
    return membership[user_id].profile if user_id in membership else None


def _contact(card: Card, contact_id: int) -> dict[str, Any] | None:
    """Show one of the card's own contacts, with all its details, or nothing.

    Only a contact the card lists opens: the link grants what the card
    showed, not the address book.
    """
    if not card_contacts(card).filter(pk=contact_id).exists():
        return None
    contact = find_contact(household=card.household, contact_id=contact_id)
    return {"contact": contact} if contact else None


card_type(
    CardType(
        kind=CONTACT_PICKER,
        template="cards/contact_picker.html",
        context=_rows_context,
        pick=_pick,
        pick_member=_pick_member,
        contact=_contact,
        contact_template="cards/contact.html",
    )
)
card_type(
    CardType(
        kind=CONTACTS_FOUND,
        template="cards/contacts_found.html",
        context=_letters_context,
        pick=_pick,
        contact=_contact,
        contact_template="cards/contact.html",
    )
)
