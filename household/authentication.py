"""Bearer-token authentication for the agent API."""

from datetime import timedelta

from django.db.models import F
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from household.callers import MemberCaller
from household.models import Membership
from yorik.models import ApiToken
from yorik.tokens import hash_token

# Recording every use would turn each read into a write; minutes are enough.
LAST_USED_PRECISION = timedelta(minutes=5)


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
        membership = (
            Membership.objects.live()
            .select_related("household", "profile")
            .filter(
                profile__api_tokens__key_hash=hash_token(header[1].decode("latin-1")),
                profile__api_tokens__revoked_at__isnull=True,
            )
            .annotate(
                token_id=F("profile__api_tokens__pk"),
                token_last_used_at=F("profile__api_tokens__last_used_at"),
            )
            .first()
        )
        if membership is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if not membership.acts:
            # Offboarding: the token stays on record but does nothing, whatever
            # the role, until the membership is active again.
            raise exceptions.AuthenticationFailed(
                f"The membership behind this token is {membership.status}; "
                "only active members may use the API."
            )
        token = ApiToken(
            pk=membership.token_id,
            profile=membership.profile,
            household=membership.household,
            last_used_at=membership.token_last_used_at,
        )
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return MemberCaller(membership=membership), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
