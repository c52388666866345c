"""Cards: stored results a person opens in the browser to pick from.

The framework creates, signs, opens and picks cards. What a card shows is
declared by the app that owns its kind, in that app's `cards.py` (discovered
like `skills.py`): the template, the rows as the viewer may see them, and
which contact a pick may name. A card stores ids only; its page is rendered
from the rows as they are now.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.db import models
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy

from yorik.bulk import insert_row
from yorik.callers import Caller
from yorik.models import Card

_SALT = "yorik.cards"
# The longest search a card's search field (`q`) takes.
SEARCH_LENGTH = 200


@dataclass(frozen=True)
class CardType:
    """A kind of card, declared by the app that owns it.

    `context` returns the template's context for the reader whose rights
    the rows are filtered by (the logged-in member of the card's household
    who opened it, or, for a visitor through the signed link, the card's
    creator as they are now) and the page's query parameters (e.g. `page`
    on a long card).
    `pick` returns the contact a pick names if the card may be answered
    with it, else None; kinds without it cannot be picked (nor declined).
    `pick_member` does the same for the household members (user profiles)
    a card lists; kinds without it list none.
    `contact` returns the context of `contact_template` for one contact the
    card shows, or None for any other id; kinds without it open no contact
    page through their link.
    """

    kind: str
    template: str
    context: Callable[[Card, Caller, Mapping[str, str]], dict[str, Any]]
    pick: Callable[[Card, int], models.Model | None] | None = None
    pick_member: Callable[[Card, int], models.Model | None] | None = None
    contact: Callable[[Card, int], dict[str, Any] | None] | None = None
    contact_template: str = ""


_card_types: dict[str, CardType] = {}


def card_type(declared: CardType) -> CardType:
    """Register a kind of card; each app calls this in its cards.py."""
    if declared.kind in _card_types:
        raise ValueError(f"Card kind {declared.kind!r} is declared twice.")
    _card_types[declared.kind] = declared
    return declared


def get_card_type(kind: str) -> CardType:
    """Return the declared kind, or raise LookupError for an unknown one."""
    try:
        return _card_types[kind]
    except KeyError:
        raise LookupError(f"No card kind {kind!r} is declared.") from None


def card_kinds() -> list[str]:
    return sorted(_card_types)


def card_search(params: Mapping[str, str]) -> str:
    """Return the search a card's page was asked for (`q`), at most SEARCH_LENGTH."""
    return params.get("q", "").strip()[:SEARCH_LENGTH]


def page_viewer(user: AbstractBaseUser | AnonymousUser) -> Caller | None:
    """Return the member behind a logged-in user, as settings.YORIK_PAGE_VIEWER says."""
    return import_string(settings.YORIK_PAGE_VIEWER)(user)


def profile_caller(profile_id: int | None) -> Caller | None:
    """Return the member who may act for a profile, as YORIK_PROFILE_CALLER says."""
    if profile_id is None:
        return None
    return import_string(settings.YORIK_PROFILE_CALLER)(profile_id)


def create_card(
    *,
    household: models.Model,
    kind: str,
    payload: dict[str, Any],
    created_by: models.Model | None,
    pick_to_chat: bool = True,
) -> Card:
    """Store a card that can be opened for as long as its signed link lives.

    Skills emit one with most answers: it is written by a prepared INSERT.
    """
    get_card_type(kind)
    card = Card(
        household_id=household.pk,
        kind=kind,
        payload=payload,
        created_by_id=created_by.pk if created_by else None,
        pick_to_chat=pick_to_chat,
        expires_at=timezone.now() + timedelta(seconds=settings.YORIK_CARD_LINK_MAX_AGE),
    )
    insert_row(card)
    return card


def card_link(card: Card) -> str:
    """Return the card's path with a signed, expiring token in its query.

    The token signs the card's id and its household's, so that the page
    looks the card up in its household alone (on Citus: on one shard).
    """
    token = _signer().sign(f"{card.pk}.{card.household_id}")
    return f"{card.get_absolute_url()}?t={token}"


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=_SALT)


def _token_value(value: str) -> tuple[str, int | None]:
    """Return the card id and household id a token's value names."""
    card_id, _, household = value.partition(".")
    return card_id, int(household) if household.isdigit() else None


def _signed_for(card_id: UUID, value: str) -> int | None:
    """Return the household of a token's value if it names the card, else None."""
    signed_id, household_id = _token_value(value)
    return household_id if signed_id == str(card_id) else None


def link_household(card_id: UUID, token: str) -> int | None:
    """Return the household a card link's token was signed for, if the token
    was signed for this card and is fresh; else None."""
    try:
        value = _signer().unsign(token, max_age=settings.YORIK_CARD_LINK_MAX_AGE)
    except signing.BadSignature:
        return None
    return _signed_for(card_id, value)


@dataclass(frozen=True)
class OpenedCard:
    """A card a visitor may see, and the member whose rights filter its rows."""

    card: Card
    reader: Caller

    @property
    def card_type(self) -> CardType:
        return get_card_type(self.card.kind)

    def context(self, params: Mapping[str, str]) -> dict[str, Any]:
        return self.card_type.context(self.card, self.reader, params)

    def contact_context(self, contact_id: int) -> dict[str, Any] | None:
        """Return one contact of the card as its contact page shows it, or None."""
        contact = self.card_type.contact
        return contact(self.card, contact_id) if contact else None


def open_card(
    *, card_id: UUID, user: AbstractBaseUser | AnonymousUser, token: str
) -> OpenedCard | None:
    """Return the card if the visitor may open it, else None.

    A live card opens for an acting, logged-in member of its household, who
    sees its rows as their own rights allow; or through its signed link while
    its creator still acts, showing what the creator may see now. Once
    expired, or once its creator is offboarded, a link opens nothing.
    """
    reader = page_viewer(user)
    linked = link_household(card_id, token) if token else None
    household_id = linked or (reader.household.pk if reader else None)
    if household_id is None:
        return None
    card = (
        Card.objects.select_related("picked_contact")
        .prefetch_related("household", "picked_profile")
        .filter(household_id=household_id, pk=card_id, expires_at__gt=timezone.now())
        .first()
    )
    if card is None:
        return None
    if reader is None or reader.household.pk != card.household_id:
        if linked != card.household_id:
            return None
        reader = profile_caller(card.created_by_id)
        if reader is None or reader.household.pk != card.household_id:
            return None
    return OpenedCard(card=card, reader=reader)


@dataclass(frozen=True)
class ClosedLink:
    """Why a card's page did not open, and the language to say it in.

    The reason is "expired" (the link or the card is past its day),
    "invalid" (the token is cut short, altered or signed for another card)
    or "gone" (anything else: no token, a deleted card, a creator no longer
    acting, another household's member). The language is the card's
    household's, or "" when no such card is stored.
    """

    reason: str
    language: str


def closed_link(
    *, card_id: UUID, token: str, user: AbstractBaseUser | AnonymousUser
) -> ClosedLink:
    """Tell a visitor whom open_card refused why, without showing the card.

    The card's language is looked up in the household the token names,
    signed or not, else in the logged-in member's: a token altered to name
    another household finds no card there.
    """
    signer = _signer()
    reason = "gone"
    household_id = None
    if token:
        try:
            value = signer.unsign(token, max_age=settings.YORIK_CARD_LINK_MAX_AGE)
        except signing.SignatureExpired:
            value = signer.unsign(token)
            reason = "expired"
        except signing.BadSignature:
            value = token.rsplit(signer.sep, 2)[0]
            reason = "invalid"
        signed_id, household_id = _token_value(value)
        if signed_id != str(card_id):
            reason = "invalid"
    if household_id is None and (reader := page_viewer(user)) is not None:
        household_id = reader.household.pk
    expires_at = (
        Card.objects.filter(household_id=household_id, pk=card_id)
        .values_list("expires_at", flat=True)
        .first()
        if household_id is not None
        else None
    )
    if expires_at is None:
        return ClosedLink(reason=reason, language="")
    if expires_at <= timezone.now() and reason == "gone":
        reason = "expired"
    return ClosedLink(reason=reason, language=_household_language(household_id))


def card_language(card_id: UUID) -> str:
    """Return the language of a stored card's household, or "" for no such card."""
    household_id = (
        Card.objects.filter(pk=card_id).values_list("household_id", flat=True).first()
    )
    return _household_language(household_id) if household_id is not None else ""


def _household_language(household_id: int) -> str:
    """Return the household's language, read apart from its cards: on Citus
    the households stay on the coordinator (yorik.citus)."""
    households = Card._meta.get_field("household").related_model
    return (
        households.objects.filter(pk=household_id)
        .values_list("language", flat=True)
        .first()
        or ""
    )


def delete_expired_cards() -> int:
    """Delete the cards whose links have expired; return how many.

    An expired card opens for no one and takes no pick.
    """
    deleted, _ = Card.objects.filter(expires_at__lte=timezone.now()).delete()
    return deleted


def find_card(*, caller: Caller, card_id: UUID) -> Card | None:
    """Return a card the caller created, with its pick, or None.

    Cards answer one member's question, so only their creator reads them
    back; another member's card is as unknown as a missing one.
    """
    return (
        Card.objects.select_related("picked_contact")
        .prefetch_related("picked_profile")
        .filter(
            household_id=caller.household.pk,
            created_by_id=caller.profile.pk,
            pk=card_id,
        )
        .first()
    )


class PickRefused(Exception):
    """A pick the card does not take: not one of its rows, or not a picking card."""

    message = gettext_lazy("That contact cannot be picked on this card.")

    def __init__(self, card: Card) -> None:
        super().__init__(str(self.message))
        self.card = card


class CardAnsweredMeanwhile(PickRefused):
    """An answer sent from a page shown before the card's latest answer.

    The card keeps its latest answer; the person sees it and may change it.
    """

    message = gettext_lazy(
        "This card was answered in the meantime, perhaps in another tab or "
        "window. Its answer now is shown below."
    )


def pick_contact(*, card: Card, contact_id: int, seen: int = 0) -> Card:
    """Record the contact a card was answered with, replacing an earlier answer.

    `seen` is the number of answers the page that sent the pick was shown
    with (see _record_answer).
    """
    pick = get_card_type(card.kind).pick
    contact = pick(card, contact_id) if pick and card.pick_to_chat else None
    if contact is None:
        raise PickRefused(card)
    return _record_answer(card=card, seen=seen, contact=contact)


def pick_member(*, card: Card, user_id: int, seen: int = 0) -> Card:
    """Record the household member a card was answered with (see pick_contact)."""
    pick = get_card_type(card.kind).pick_member
    profile = pick(card, user_id) if pick and card.pick_to_chat else None
    if profile is None:
        raise PickRefused(card)
    return _record_answer(card=card, seen=seen, profile=profile)


def decline_card(*, card: Card, seen: int = 0) -> Card:
    """Record that none of the card's rows is the one the person meant."""
    if not (card.pick_to_chat and get_card_type(card.kind).pick):
        raise PickRefused(card)
    return _record_answer(card=card, seen=seen, declined=True)


def _record_answer(
    *,
    card: Card,
    seen: int,
    contact: models.Model | None = None,
    profile: models.Model | None = None,
    declined: bool = False,
) -> Card:
    """Store one answer (a contact, a member, or none of these) on the card.

    The conditional UPDATE takes the answer only from a page shown with the
    card's latest answer count (`seen`): of two answers sent from one page at
    the same moment, one wins. An outdated page's answer is refused with
    CardAnsweredMeanwhile, unless it repeats the card's answer (a double
    submit), which is taken as given and teaches nothing more.
    """
    answer = {
        "picked_contact": contact,
        "picked_profile": profile,
        "declined": declined,
    }
    now = timezone.now()
    taken = Card.objects.filter(
        household_id=card.household_id, pk=card.pk, answers=seen
    ).update(**answer, picked_at=now, answers=models.F("answers") + 1)
    if not taken:
        card.refresh_from_db(
            fields=[
                "picked_contact",
                "picked_profile",
                "declined",
                "picked_at",
                "answers",
            ]
        )
        repeated = (
            card.picked_contact_id == (contact.pk if contact else None)
            and card.picked_profile_id == (profile.pk if profile else None)
            and card.declined == declined
            and card.picked_at is not None
        )
        if not repeated:
            raise CardAnsweredMeanwhile(card)
        return card
    card.picked_contact, card.picked_profile, card.declined = contact, profile, declined
    card.picked_at, card.answers = now, seen + 1
    # What the answer teaches (YORIK_PICK_TEACHER) follows the latest answer.
    import_string(settings.YORIK_PICK_TEACHER)(card)
    return card
