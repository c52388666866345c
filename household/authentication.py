"""Bearer-token authentication for the agent API."""

from datetime import timedelta

from django.db import connection, models
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from household.callers import MemberCaller
from household.models import Household, Membership, UserProfile
from yorik.compiled import CompiledQuery
from yorik.models import ApiToken
from yorik.tokens import hash_token

# Recording every use would turn each read into a write; minutes are enough.
LAST_USED_PRECISION = timedelta(minutes=5)


def _columns(model: type[models.Model]) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


_READ = {
    Membership: _columns(Membership),
    Household: _columns(Household),
    UserProfile: _columns(UserProfile),
}

# Every API call asks this: compiled once, it costs a tenth of building it.
_TOKEN_MEMBERSHIP = CompiledQuery(
    lambda key_hash: (
        Membership.objects.live()
        .filter(
            profile__api_tokens__key_hash=key_hash,
            profile__api_tokens__revoked_at__isnull=True,
        )
        .values_list(
            *_READ[Membership],
            *(f"household__{column}" for column in _READ[Household]),
            *(f"profile__{column}" for column in _READ[UserProfile]),
            "profile__api_tokens__pk",
            "profile__api_tokens__last_used_at",
        )
        .order_by("pk")[:1]
    ),
    key_hash=str,
)


def token_membership(key_hash: str) -> tuple[Membership, int, object] | None:
    """Return the live membership behind a live token, the token's id and last use.

    One SELECT; the membership comes with its household and profile.
    """
    rows = _TOKEN_MEMBERSHIP.rows(key_hash=key_hash)
    if not rows:
        return None
    row = rows[0]
    loaded = {}
    start = 0
    for model, columns in _READ.items():
        end = start + len(columns)
        loaded[model] = model.from_db(connection.alias, columns, row[start:end])
        start = end
    membership = loaded[Membership]
    membership.household = loaded[Household]
    membership.profile = loaded[UserProfile]
    token_id, last_used_at = row[start:]
    return membership, token_id, last_used_at


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[MemberCaller, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header:
            return None
        if header[0].decode("latin-1") != self.keyword or len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Send the token as 'Authorization: Bearer <token>'."
            )
        found = token_membership(hash_token(header[1].decode("latin-1")))
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        membership, token_id, last_used_at = found
        if not membership.acts:
            # Offboarding: the token stays on record but does nothing, whatever
            # the role, until the membership is active again.
            raise exceptions.AuthenticationFailed(
                f"The membership behind this token is {membership.status}; "
                "only active members may use the API."
            )
        token = ApiToken(
            pk=token_id,
            profile=membership.profile,
            household=membership.household,
            last_used_at=last_used_at,
        )
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return MemberCaller(membership=membership), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
