"""Who is calling: a household member, with the tier their role gives them."""

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from household.models import Household, Membership, UserProfile
from household.selectors import acting_membership, membership_for_user


@dataclass(frozen=True)
class MemberCaller:
    """The authenticated member behind a request (DRF's `request.user`).

    Satisfies the framework's `yorik.callers.Caller` protocol.
    """

    membership: Membership

    is_authenticated = True

    @property
    def pk(self) -> int:
        """The membership's id: one caller per person and household."""
        return self.membership.pk

    @property
    def profile(self) -> UserProfile:
        return self.membership.profile

    @property
    def household(self) -> Household:
        return self.membership.household

    @property
    def tier(self) -> str:
        return self.membership.tier


def caller_for_user(user: AbstractBaseUser | AnonymousUser) -> MemberCaller | None:
    """Return the member behind a logged-in user, or None: YORIK_PAGE_VIEWER."""
    membership = membership_for_user(user)
    return MemberCaller(membership=membership) if membership else None


def caller_for_profile(profile_id: int) -> MemberCaller | None:
    """Return the acting member behind a profile, or None: YORIK_PROFILE_CALLER."""
    membership = acting_membership(profile_id)
    return MemberCaller(membership=membership) if membership else None
