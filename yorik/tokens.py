"""Issue, check and revoke the bearer tokens the assistant backend calls with."""

import hashlib
import secrets
from typing import Protocol

from django.db import transaction
from django.utils import timezone

from yorik.models import ApiToken

TOKEN_PREFIX = "yk_"  # noqa: S105 - a marker that makes leaked tokens greppable


class TokenOwner(Protocol):
    """The person a token acts for: a household's user profile."""

    pk: int
    household_id: int


def hash_token(plain: str) -> str:
    """Return the SHA-256 hex digest stored in place of a token.

    Tokens carry 256 random bits, so a fast hash is enough: there is nothing
    to guess that a slow password hash would protect.
    """
    return hashlib.sha256(plain.encode()).hexdigest()


@transaction.atomic
def issue_token(*, profile: TokenOwner, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for the profile; return it with the plain text, shown once."""
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        household_id=profile.household_id,
        profile_id=profile.pk,
        key_hash=hash_token(plain),
        prefix=plain[: len(TOKEN_PREFIX) + 6],
        name=name,
    )
    return token, plain


def revoke_tokens(*, profile: TokenOwner) -> int:
    """Revoke every live token of the profile; return how many were revoked."""
    return ApiToken.objects.filter(
        profile_id=profile.pk, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
