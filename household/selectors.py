"""Reads of households, their people and memberships."""

from collections.abc import Iterable

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet, Sum
from django.utils import timezone

from household.models import (
    Conversation,
    Household,
    Lead,
    LeadAccess,
    Membership,
    MembershipStatus,
    ModelUsage,
    Role,
    UserProfile,
)
from people_search.engine.sql import Statement, compose, sql
from people_search.engine.statements import Table
from people_search.index.querysets import MatchColumns
from yorik.indexes import as_bigint

# Where a profile's or a lead's derived columns are, for the matching engine's
# conditions on a queryset (admin search).
PERSON_COLUMNS = MatchColumns(phone_digits="phone_nsn")
# How a search's statement reads the household's members and leads.
MEMBERS = Table(
    rows="household_membership AS m JOIN user_profiles AS p ON p.id = m.profile_id",
    households=("m.household_id", "p.household_id"),
    key="m.id",
    sort_name="p.sort_name",
    search_text="p.search_text",
    match_text="p.match_text",
    phone_digits="p.phone_nsn",
)
LEADS = Table(
    rows="household_lead AS l",
    households=("l.household_id",),
    key="l.id",
    sort_name="l.sort_name",
    search_text="l.search_text",
    match_text="l.match_text",
    phone_digits="l.phone_nsn",
)


def profile_for_login(username: str) -> UserProfile | None:
    """Return the live profile behind a login name, or None."""
    return (
        UserProfile.objects.select_related("household", "user")
        .filter(user__username=username, deleted_at__isnull=True)
        .first()
    )


def acting_membership(profile_id: int) -> Membership | None:
    """Return the profile's membership if it may act (status active), or None."""
    return (
        Membership.objects.acting()
        .select_related("household", "profile")
        .filter(profile_id=profile_id)
        .first()
    )


def membership_for_user(user: AbstractBaseUser | AnonymousUser) -> Membership | None:
    """Return the acting household membership behind a logged-in user, or None.

    Pages read the household from here; like the agent API's bearer tokens,
    a login acts only while its membership is active (not pending, paused,
    cancelled or removed) and its profile is not deleted.
    """
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.acting()
        .select_related("household", "profile")
        .filter(profile__user=user)
        .first()
    )


def conversation_of(*, membership: Membership, conversation_id: int) -> Conversation:
    """Return the member's own conversation, or raise Conversation.DoesNotExist."""
    return Conversation.objects.get(pk=conversation_id, membership=membership)


def tokens_used_this_month(*, membership: Membership) -> int:
    """Return the model tokens spent for the member since the month began."""
    month_start = timezone.localtime().replace(
        day=1, hour=0, minute=0, second=0, microsecond=0
    )
    return (
        ModelUsage.objects.filter(
            membership=membership, created_at__gte=month_start
        ).aggregate(total=Sum("tokens"))["total"]
        or 0
    )


def is_over_budget(*, membership: Membership) -> bool:
    """Return whether the member used up this month's model allowance."""
    return tokens_used_this_month(membership=membership) >= (
        membership.monthly_token_allowance
    )


def find_member(*, household: Household, membership_id: int) -> Membership | None:
    """Return a live membership of the household (not removed, profile not deleted)."""
    return (
        Membership.objects.live(household=household)
        .select_related("profile")
        .filter(pk=membership_id)
        .first()
    )


def members_of_profiles(
    *, household: Household, profile_ids: Iterable[int]
) -> dict[int, Membership]:
    """Return the household's live memberships of these profiles, by profile id."""
    return {
        membership.profile_id: membership
        for membership in Membership.objects.live(household=household)
        .select_related("profile")
        .filter(profile_id__in=list(profile_ids))
    }


def live_members(*, role: str | None = None) -> Statement:
    """Return, on MEMBERS, that a membership counts, as `Membership.objects.live`
    says: not removed, its profile not deleted; of the role, if given."""
    live = compose(
        "p.deleted_at IS NULL AND m.status <> {removed}",
        removed=MembershipStatus.REMOVED.value,
    )
    if role:
        return compose("{live} AND m.role = {role}", live=live, role=role)
    return live


def leads_visible_to(actor: Membership) -> Statement:
    """Return, on LEADS, the leads the actor may see, as `visible_leads` says."""
    if actor.lead_access == LeadAccess.ALL:
        return sql("TRUE")
    if actor.lead_access == LeadAccess.OWN:
        return compose("l.owner_id = {owner}", owner=actor.pk)
    return sql("FALSE")


def visible_leads(*, actor: Membership) -> QuerySet[Lead]:
    """Return the leads the actor may see: decided by their lead_access alone."""
    leads = Lead.objects.filter(household_id=as_bigint(actor.household_id))
    if actor.lead_access == LeadAccess.ALL:
        return leads
    if actor.lead_access == LeadAccess.OWN:
        return leads.filter(owner=actor)
    return leads.none()


def member_names(household_id: int, membership_ids: list[int]) -> dict[int, str | None]:
    """Return the names to embed for these memberships; managed children get None.

    A child's name is never embedded, so that similar-name search cannot
    surface children.
    """
    return {
        membership.pk: None
        if membership.role == Role.CHILD
        else membership.profile.full_name or membership.profile.username
        for membership in Membership.objects.filter(
            household_id=household_id, pk__in=membership_ids
        ).select_related("profile")
    }


def lead_names(household_id: int, lead_ids: list[int]) -> dict[int, str | None]:
    """Return the names to embed for these leads."""
    return {
        lead.pk: lead.full_name
        for lead in Lead.objects.filter(household_id=household_id, pk__in=lead_ids)
    }
