"""Cards: stored results a person opens in the browser to pick from."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.utils import timezone

from household.models import Household, UserProfile
from yorik.models import Card

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
