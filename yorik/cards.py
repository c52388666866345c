"""Cards: stored results a person opens in the browser to pick from."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy

from contacts.models import Contact
from contacts.selectors import browse_contacts, contacts_with_ids, statuses_for
from household.models import Household, UserProfile
from household.selectors import active_membership, membership_for_user, visible_leads
from yorik.models import Card, CardKind

_SALT = "yorik.cards"


def create_card(
    *,
    household: Household,
    kind: str,
    payload: dict[str, Any],
    created_by: UserProfile | None,
    pick_to_chat: bool = True,
) -> Card:
    """Store a card that can be opened for as long as its signed link lives."""
    return Card.objects.create(
        household=household,
        kind=kind,
        payload=payload,
        created_by=created_by,
        pick_to_chat=pick_to_chat,
        expires_at=timezone.now() + timedelta(seconds=settings.YORIK_CARD_LINK_MAX_AGE),
    )


def card_link(card: Card) -> str:
    """Return the card's path with a signed, expiring token in its query."""
    token = signing.TimestampSigner(salt=_SALT).sign(str(card.pk))
    return f"{card.get_absolute_url()}?t={token}"


def link_is_valid(card_id: str, token: str) -> bool:
    """Return whether a card link's token was signed for this card and is fresh."""
    try:
        signed_id = signing.TimestampSigner(salt=_SALT).unsign(
            token, max_age=settings.YORIK_CARD_LINK_MAX_AGE
        )
    except signing.BadSignature:
        return False
    return signed_id == str(card_id)


def open_card(
    *, card_id: UUID, user: AbstractBaseUser | AnonymousUser, token: str
) -> Card | None:
    """Return the card if the visitor may open it, else None.

    A live card opens through its signed link, or for a logged-in member of
    its household; once expired it opens for no one.
    """
    card = (
        Card.objects.select_related("household", "picked_contact")
        .filter(pk=card_id, expires_at__gt=timezone.now())
        .first()
    )
    if card is None:
        return None
    if token and link_is_valid(str(card_id), token):
        return card
    membership = membership_for_user(user)
    if membership is not None and membership.household_id == card.household_id:
        return card
    return None


def visible_card_leads(
    card: Card, *, user: AbstractBaseUser | AnonymousUser
) -> list[dict[str, Any]]:
    """Return the lead rows of a people_results card that its viewer may see.

    A logged-in member of the household sees at most what their own lead
    access allows; a visitor through the signed link, what the card's creator
    may see now.
    """
    leads = card.payload.get("leads", [])
    viewer = membership_for_user(user)
    if viewer is None or viewer.household_id != card.household_id:
        viewer = card.created_by and active_membership(card.created_by)
    if viewer is None:
        return []
    visible = set(
        visible_leads(actor=viewer)
        .filter(pk__in=[lead["lead_id"] for lead in leads])
        .values_list("pk", flat=True)
    )
    return [lead for lead in leads if lead["lead_id"] in visible]


def find_card(*, household: Household, card_id: UUID) -> Card | None:
    """Return one of the household's cards with its picked contact, or None."""
    return (
        Card.objects.select_related("picked_contact")
        .filter(household=household, pk=card_id)
        .first()
    )


def card_contacts(card: Card) -> QuerySet[Contact]:
    """Return the contacts the card may show, read from its household now.

    A contact deleted since the card was emitted is simply not there, and the
    household filter keeps any other household's contact out.
    """
    if card.kind == CardKind.CONTACTS_FOUND:
        return browse_contacts(
            household=card.household,
            statuses=statuses_for(card.payload.get("status", "any")),
            kind=card.payload.get("kind"),
        )
    if card.kind == CardKind.CONTACT_PICKER:
        return contacts_with_ids(
            household=card.household,
            contact_ids=[pick["contact_id"] for pick in card.payload.get("picks", [])],
        )
    return Contact.objects.none()


@dataclass(frozen=True)
class CardRow:
    """A contact as a card shows it, with the ranking the assistant gave it."""

    contact: Contact
    confidence: float | None = None
    reason: str = ""
    padded: bool = False

    @property
    def percent(self) -> int | None:
        return None if self.confidence is None else round(self.confidence * 100)

    @property
    def letter(self) -> str:
        """Return the index letter: the folded name's first letter, or "#"."""
        first = self.contact.sort_name[:1].upper()
        return first if first.isalpha() else "#"


def read_card_rows(card: Card) -> list[CardRow]:
    """Return the rows of a contact card in the order it shows them."""
    if card.kind == CardKind.CONTACT_PICKER:
        contacts = card_contacts(card).prefetch_related("channels").in_bulk()
        return [
            CardRow(
                contact=contacts[pick["contact_id"]],
                confidence=pick.get("confidence"),
                reason=pick.get("reason", ""),
                padded=pick.get("padded", False),
            )
            for pick in card.payload.get("picks", [])
            if pick["contact_id"] in contacts
        ]
    fields = ("id", "display_name", "relation", "kind", "sort_name")
    return [CardRow(contact=contact) for contact in card_contacts(card).only(*fields)]


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


class PickRefused(Exception):
    """A pick the card does not take: not one of its rows, or not a picking card."""

    message = gettext_lazy("That contact cannot be picked on this card.")

    def __init__(self, card: Card) -> None:
        super().__init__(str(self.message))
        self.card = card


class CardAlreadyPicked(PickRefused):
    message = gettext_lazy(
        "This card has already been picked. A card can be picked only once."
    )


def pick_contact(*, card: Card, contact_id: int) -> Card:
    """Record the contact a card was answered with; a card is picked only once.

    The conditional UPDATE refuses a second pick even when two arrive at the
    same moment.
    """
    contact = (
        card_contacts(card).filter(pk=contact_id).first() if card.pick_to_chat else None
    )
    if contact is None:
        raise PickRefused(card)
    now = timezone.now()
    picked = Card.objects.filter(pk=card.pk, picked_at__isnull=True).update(
        picked_contact=contact, picked_at=now
    )
    if not picked:
        card.refresh_from_db(fields=["picked_contact", "picked_at"])
        raise CardAlreadyPicked(card)
    card.picked_contact, card.picked_at = contact, now
    return card
