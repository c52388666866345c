"""Reads of households, their people and memberships."""

from household.models import Membership, MembershipStatus, UserProfile


def profile_for_login(username: str) -> UserProfile | None:
    """Return the live profile behind a login name, or None."""
    return (
        UserProfile.objects.select_related("household", "user")
        .filter(user__username=username, deleted_at__isnull=True)
        .first()
    )


def active_membership(profile: UserProfile) -> Membership | None:
    """Return the profile's membership of its household unless it was removed."""
    if profile.deleted_at is not None:
        return None
    return (
        Membership.objects.select_related("household")
        .filter(profile=profile, household_id=profile.household_id)
        .exclude(status=MembershipStatus.REMOVED)
        .first()
    )
