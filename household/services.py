"""Writes of the household's people and leads."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from household.models import (
    CalendarEvent,
    Conversation,
    EventAttendee,
    Household,
    Lead,
    LeadAccess,
    Membership,
    ModelUsage,
    Role,
    UserProfile,
)
from household.search_columns import PersonColumns, person_columns
from household.selectors import (
    conversation_of,
    lead_names,
    member_names,
    tokens_used_this_month,
)
from people_search.engine.text import fold_name
from people_search.index.models import Subject
from people_search.index.names import index_after_commit

# Rows per INSERT of a bulk write.
BATCH_SIZE = 2000


@transaction.atomic
def create_member(
    *,
    household: Household,
    username: str,
    role: str = Role.MEMBER,
    status: str = "active",
    lead_access: str | None = None,
    password: str | None = None,
    **profile_fields: Any,
) -> Membership:
    """Create a person of the household with their membership.

    Everyone but a managed child gets a login of the same name (reused if it
    exists without a profile); household admins are staff so they can use the
    admin. Without a password the login cannot sign in until one is set.
    Admins see every lead unless told otherwise; others see none.
    """
    if lead_access is None:
        lead_access = LeadAccess.ALL if role == Role.ADMIN else LeadAccess.NONE
    user = None
    if role != Role.CHILD:
        user, _ = get_user_model().objects.get_or_create(username=username)
        if password is None:
            user.set_unusable_password()
        else:
            user.set_password(password)
        user.first_name = profile_fields.get("first_name", "")
        user.last_name = profile_fields.get("last_name", "")
        user.email = profile_fields.get("email", "")
        user.is_staff = role == Role.ADMIN
        user.save()
    profile = UserProfile(
        household=household, user=user, username=username, **profile_fields
    )
    _save_profile(profile)
    membership = Membership.objects.create(
        household=household,
        profile=profile,
        role=role,
        status=status,
        lead_access=lead_access,
    )
    index_member_names(household_id=household.pk, membership_ids=[membership.pk])
    return membership


def save_profile(*, profile: UserProfile) -> UserProfile:
    """Validate a new or changed profile, save it and re-embed its name.

    The phone is stored as E.164 and the search columns follow the names.
    """
    _save_profile(profile)
    index_profile_names(household_id=profile.household_id, profile_id=profile.pk)
    return profile


def _save_profile(profile: UserProfile) -> None:
    profile.full_clean(exclude=["user"])
    _set_columns(
        profile,
        person_columns(
            first_name=profile.first_name,
            last_name=profile.last_name,
            email=profile.email,
            fallback_name=profile.username,
        ),
    )
    profile.save()


def save_membership(*, membership: Membership) -> Membership:
    """Validate a new or changed membership, save it and re-embed its name."""
    membership.full_clean()
    membership.save()
    index_member_names(
        household_id=membership.household_id, membership_ids=[membership.pk]
    )
    return membership


def create_lead(*, household: Household, **fields: Any) -> Lead:
    """Create a lead of the household and embed its name."""
    return save_lead(lead=Lead(household=household, **fields))


@transaction.atomic
def create_leads(
    *, household: Household, rows: Sequence[Mapping[str, Any]]
) -> list[Lead]:
    """Create many leads at once and embed their names after commit.

    Each row holds create_lead's keyword arguments, an owner as a membership
    of the household. Every row is checked in Python before anything is
    written; a ValidationError keys each problem by row, e.g. `[3].phone`.
    """
    leads: list[Lead] = []
    errors: dict[str, list[str]] = {}
    for index, row in enumerate(rows):
        lead = Lead(household=household, **row)
        try:
            # The owner is a given membership and clean() checks its household,
            # so no query looks it up; the check constraints restate the fields.
            lead.full_clean(
                exclude=["household", "owner"],
                validate_unique=False,
                validate_constraints=False,
            )
        except ValidationError as error:
            errors |= {
                f"[{index}].{field}": messages
                for field, messages in error.message_dict.items()
            }
            continue
        _set_columns(
            lead,
            person_columns(
                first_name=lead.first_name,
                last_name=lead.last_name,
                email=lead.email,
                fallback_name=lead.email,
            ),
        )
        leads.append(lead)
    if errors:
        raise ValidationError(errors)
    Lead.objects.bulk_create(leads, batch_size=BATCH_SIZE)
    index_lead_names(household_id=household.pk, lead_ids=[lead.pk for lead in leads])
    return leads


def save_lead(*, lead: Lead) -> Lead:
    """Validate a new or changed lead, save it and re-embed its name.

    The phone is stored as E.164 and the search columns follow the names.
    """
    lead.full_clean()
    _set_columns(
        lead,
        person_columns(
            first_name=lead.first_name,
            last_name=lead.last_name,
            email=lead.email,
            fallback_name=lead.email,
        ),
    )
    lead.save()
    index_lead_names(household_id=lead.household_id, lead_ids=[lead.pk])
    return lead


def _set_columns(row: UserProfile | Lead, columns: PersonColumns) -> None:
    for name, value in columns.items():
        setattr(row, name, value)


def start_conversation(*, membership: Membership) -> Conversation:
    """Open a new conversation of a member with the assistant."""
    return Conversation.objects.create(
        household_id=membership.household_id, membership=membership
    )


def record_usage(
    *, membership: Membership, conversation_id: int | None, tokens: int
) -> tuple[int, int]:
    """Record model tokens spent for a member in one of their conversations.

    Return the tokens used this month and the monthly allowance.
    """
    conversation = (
        conversation_of(membership=membership, conversation_id=conversation_id)
        if conversation_id is not None
        else None
    )
    ModelUsage.objects.create(
        household_id=membership.household_id,
        membership=membership,
        conversation=conversation,
        tokens=tokens,
    )
    return (
        tokens_used_this_month(membership=membership),
        membership.monthly_token_allowance,
    )


def index_member_names(*, household_id: int, membership_ids: Iterable[int]) -> None:
    """Embed these memberships' names after commit; children are never embedded."""
    index_after_commit(
        household_id=household_id,
        subject=Subject.MEMBER,
        ids=membership_ids,
        load_names=member_names,
    )


def index_profile_names(*, household_id: int, profile_id: int) -> None:
    """Embed the name of a profile's memberships after the profile changed."""
    index_member_names(
        household_id=household_id,
        membership_ids=Membership.objects.filter(profile_id=profile_id).values_list(
            "pk", flat=True
        ),
    )


def index_lead_names(*, household_id: int, lead_ids: Iterable[int]) -> None:
    """Embed these leads' names after commit."""
    index_after_commit(
        household_id=household_id,
        subject=Subject.LEAD,
        ids=lead_ids,
        load_names=lead_names,
    )


@transaction.atomic
def create_calendar_event(
    *,
    household: Household,
    title: str,
    starts_at: datetime,
    ends_at: datetime | None = None,
    location: str = "",
    attendees: Iterable[UserProfile] = (),
) -> CalendarEvent:
    """Create an event of the household with its folded title and attendees."""
    (event,) = create_calendar_events(
        household=household,
        rows=[
            {
                "title": title,
                "starts_at": starts_at,
                "ends_at": ends_at,
                "location": location,
                "attendees": attendees,
            }
        ],
    )
    return event


@transaction.atomic
def create_calendar_events(
    *, household: Household, rows: Sequence[Mapping[str, Any]]
) -> list[CalendarEvent]:
    """Create many events, each row holding create_calendar_event's arguments."""
    events = [
        CalendarEvent(
            household=household,
            folded_title=fold_name(row["title"]),
            **{name: value for name, value in row.items() if name != "attendees"},
        )
        for row in rows
    ]
    CalendarEvent.objects.bulk_create(events, batch_size=BATCH_SIZE)
    EventAttendee.objects.bulk_create(
        [
            EventAttendee(
                household=household,
                calendarevent_id=event.pk,
                userprofile_id=profile.pk,
            )
            for event, row in zip(events, rows, strict=True)
            # A person listed twice attends once. (Not attendees.set(), which
            # joins the profiles to the attendees: on Citus they are apart,
            # yorik.tenancy.joins_apart.)
            for profile in dict.fromkeys(row.get("attendees", ()))
        ],
        batch_size=BATCH_SIZE,
    )
    return events


def fold_event_titles(*, event_ids: Iterable[int]) -> None:
    """Store the folded title of events whose title was saved without it."""
    events = list(CalendarEvent.objects.filter(pk__in=list(event_ids)).only("title"))
    for event in events:
        event.folded_title = fold_name(event.title)
    CalendarEvent.objects.bulk_update(events, ["folded_title"])
