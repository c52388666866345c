"""Who is calling: a household member, with the tier their role gives them."""

from dataclasses import dataclass

from household.models import Household, Membership, UserProfile


@dataclass(frozen=True)
class Caller:
    """The authenticated member behind a request (DRF's `request.user`)."""

    membership: Membership

    is_authenticated = True

    @property
    def profile(self) -> UserProfile:
        return self.membership.profile

    @property
    def household(self) -> Household:
        return self.membership.household

    @property
    def tier(self) -> str:
        return self.membership.tier
