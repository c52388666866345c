"""Bearer-token authentication for the agent API."""

from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, models
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from household.callers import MemberCaller
from household.models import Household, Membership, UserProfile
from yorik.compiled import CompiledQuery
from yorik.models import ApiToken
from yorik.rate_limits import Counted, count_found
from yorik.throttling import TokenRateThrottle
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


# The token's id, by which its requests are counted: the last column but one.
_TOKEN_ID = -2


@dataclass(frozen=True)
class TokenMembership:
    """The live membership behind a live token, with the token's id and last
    use, and the request counted for the token, if asked."""

    membership: Membership
    token_id: int
    last_used_at: object
    counted: Counted | None = None


def token_membership(
    key_hash: str, *, counting: tuple[str, int] | None = None
) -> TokenMembership | None:
    """Return the live membership behind a live token, or None.

    One SELECT; the membership comes with its household and profile. With
    `counting` (a rate limit's key prefix and window length in seconds) the
    same statement counts the request against the token, as the rate limit
    would. (On Citus too: every table it reads or writes stays on the
    coordinator, unknown to Citus; yorik.citus.)
    """
    counted = None
    if counting is None:
        rows = _TOKEN_MEMBERSHIP.rows(key_hash=key_hash)
    else:
        key_prefix, window_seconds = counting
        columns = _TOKEN_MEMBERSHIP.columns
        fetched, counted = count_found(
            _TOKEN_MEMBERSHIP.statement(key_hash=key_hash),
            columns=columns,
            key_column=columns + _TOKEN_ID,
            key_prefix=key_prefix,
            window_seconds=window_seconds,
        )
        rows = _TOKEN_MEMBERSHIP.converted(fetched)
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
    return TokenMembership(membership, token_id, last_used_at, counted)


def counting_window(request: Request) -> tuple[str, int] | None:
    """Return the key prefix and window the view's token rate limit counts the
    request in, so that looking the token up counts it too (None: it does not)."""
    view = (request.parser_context or {}).get("view")
    if TokenRateThrottle not in getattr(view, "throttle_classes", ()):
        return None
    return TokenRateThrottle().window_for(view)


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
        found = token_membership(
            hash_token(header[1].decode("latin-1")), counting=counting_window(request)
        )
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        membership = found.membership
        if not membership.acts:
            # Offboarding: the token stays on record but does nothing, whatever
            # the role, until the membership is active again.
            raise exceptions.AuthenticationFailed(
                f"The membership behind this token is {membership.status}; "
                "only active members may use the API."
            )
        token = ApiToken(
            pk=found.token_id,
            profile=membership.profile,
            household=membership.household,
            last_used_at=found.last_used_at,
        )
        # The rate limit reads the count taken with the lookup, not counting again.
        token.counted = found.counted
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return MemberCaller(membership=membership), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
