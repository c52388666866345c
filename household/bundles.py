"""The household's own sections of a bundle: household, people, leads, calendar events.

yorik.bundles composes the file (format `yorik.household/1`) from one section
module per app; each offers `fields`, `problems`, `import_rows` and `export_rows`
for the top-level keys it owns (see yorik.bundles.Section). This one also owns the
household row, its region (`region_of`, which drives phone parsing in every
section) and the small building blocks the other sections share.
"""

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Prefetch
from django.utils import timezone
from phonenumbers import SUPPORTED_REGIONS
from rest_framework import serializers

from household.models import (
    EventAttendee,
    Household,
    Language,
    LeadAccess,
    LeadStatus,
    Membership,
    MembershipStatus,
    Role,
    validate_region,
)
from household.services import create_calendar_events, create_leads, create_member
from people_search.engine.phones import InvalidPhoneNumber, parse_phone
from yorik.serializers import StrictSerializer

# Building blocks shared by every app's section.


def text(**kwargs: Any) -> serializers.CharField:
    """Return a text field that may be blank or missing."""
    return serializers.CharField(allow_blank=True, default="", **kwargs)


def rows_of(value: Any) -> list[dict[str, Any]]:
    """Return the objects of a raw JSON list; anything else has no rows."""
    if not isinstance(value, list):
        return []
    return [row for row in value if isinstance(row, dict)]


def duplicates(values: Iterable[Any]) -> set[Any]:
    """Return the values listed more than once.

    JSON lists and objects cannot be counted; the serializer reports them.
    """
    counts = Counter(value for value in values if isinstance(value, Hashable))
    return {value for value, count in counts.items() if count > 1}


def is_among(value: Any, values: set[Any]) -> bool:
    """Return whether a raw JSON value is in `values`; lists and objects never are."""
    return isinstance(value, Hashable) and value in values


def timestamp(value: Any) -> str | None:
    """Return a datetime as the bundle writes it: local time, UTC as `Z`."""
    if value is None:
        return None
    value = timezone.localtime(value)
    return value.isoformat().replace("+00:00", "Z")


def region_of(bundle: dict[str, Any]) -> str | None:
    """Return the region phones are parsed in, or None while the household is bad.

    The composed serializer passes it to every section as `context["region"]`.
    """
    household = bundle.get("household")
    if not isinstance(household, dict):
        return None
    region = household.get("default_region", "DE")
    # A bad region is reported by HouseholdPart; phones are then left unchecked.
    return region if region in SUPPORTED_REGIONS else None


# Serializers describe the sections' shape; they validate and are never saved.


class PhoneField(serializers.CharField):
    """A phone as typed; valid when it parses in the bundle's household region."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, default="", **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not value:
            return ""
        region = self.context.get("region")
        if not region:  # The household part is invalid; its own error says why.
            return value
        try:
            return parse_phone(value, region).e164
        except InvalidPhoneNumber as error:
            raise serializers.ValidationError(str(error)) from error


class HouseholdPart(StrictSerializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    default_region = serializers.CharField(
        max_length=2, default="DE", validators=[validate_region]
    )
    language = serializers.ChoiceField(Language.choices, default=Language.GERMAN)


USERNAME = r"^[\w.@+-]+\Z"


class RelationWordPart(StrictSerializer):
    """A person's own word for a contact (its ref) or another person (username)."""

    word = serializers.CharField(max_length=60)
    contact = serializers.CharField(max_length=64, required=False)
    person = serializers.RegexField(USERNAME, max_length=150, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("contact" in attrs) == ("person" in attrs):
            raise serializers.ValidationError(
                {"contact": "give exactly one of contact and person"}
            )
        return attrs


class NameChoicePart(StrictSerializer):
    """The contact (its ref) a person meant by a name."""

    query = serializers.CharField(max_length=60)
    contact = serializers.CharField(max_length=64)


# A person's own words, written by people_search's section once contacts exist.
PERSONAL_WORD_KEYS = ("relation_words", "name_choices")


class PersonPart(StrictSerializer):
    username = serializers.RegexField(USERNAME, max_length=150)
    first_name = text(max_length=150)
    last_name = text(max_length=150)
    email = serializers.EmailField(allow_blank=True, default="")
    phone = PhoneField()
    role = serializers.ChoiceField(Role.choices, default=Role.MEMBER)
    status = serializers.ChoiceField(
        MembershipStatus.choices, default=MembershipStatus.ACTIVE
    )
    lead_access = serializers.ChoiceField(LeadAccess.choices, required=False)
    # The person's preferred language, given only when it is not the household's.
    language = serializers.ChoiceField(Language.choices, required=False)
    deleted_at = serializers.DateTimeField(allow_null=True, default=None)
    relation_words = RelationWordPart(many=True, required=False)
    name_choices = NameChoicePart(many=True, required=False)


class LeadPart(StrictSerializer):
    first_name = text(max_length=150)
    last_name = text(max_length=150)
    email = serializers.EmailField(allow_blank=True, default="")
    phone = PhoneField()
    status = serializers.ChoiceField(LeadStatus.choices, default=LeadStatus.NEW)
    archived = serializers.BooleanField(default=False)
    owner = serializers.CharField(allow_null=True, allow_blank=True, default=None)


class EventPart(StrictSerializer):
    title = serializers.CharField(max_length=300)
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(allow_null=True, default=None)
    location = text(max_length=300)
    attendees = serializers.ListField(child=serializers.CharField(), default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["ends_at"] and attrs["ends_at"] < attrs["starts_at"]:
            raise serializers.ValidationError({"ends_at": "ends before it starts"})
        return attrs


def fields() -> dict[str, serializers.Field]:
    """Return new serializer fields for this section's keys."""
    return {
        "household": HouseholdPart(),
        "people": PersonPart(many=True, default=list),
        "leads": LeadPart(many=True, default=list),
        "calendar_events": EventPart(many=True, default=list),
    }


def problems(bundle: dict[str, Any], *, replace: bool) -> list[str]:
    """Return the problems that span rows: slug and login clashes, unknown people."""
    found = []
    household = bundle.get("household")
    slug = household.get("slug") if isinstance(household, dict) else None
    existing = (
        Household.objects.filter(slug=slug).first() if isinstance(slug, str) else None
    )
    if existing and not replace:
        found.append(
            f"household.slug: household {slug!r} exists already; "
            "pass --replace to overwrite it"
        )

    usernames = [person.get("username") for person in rows_of(bundle.get("people"))]
    listed_twice = duplicates(usernames)
    # Importing a person attaches the login of that name, so every login that
    # is not already this household's is refused: another household's, and
    # one without a profile (a superuser's, say), which would change hands.
    logins_elsewhere = get_user_model().objects.filter(
        username__in=[u for u in usernames if isinstance(u, str)]
    )
    if existing:
        logins_elsewhere = logins_elsewhere.exclude(profile__household=existing)
    taken = dict(logins_elsewhere.values_list("username", "profile__household"))
    for index, username in enumerate(usernames):
        if is_among(username, listed_twice):
            found.append(f"people[{index}].username: {username!r} is listed twice")
        if is_among(username, taken):
            where = (
                "belongs to another household"
                if taken[username]
                else "exists already outside any household"
            )
            found.append(f"people[{index}].username: login {username!r} {where}")
    known = {username for username in usernames if isinstance(username, Hashable)}

    for index, lead in enumerate(rows_of(bundle.get("leads"))):
        owner = lead.get("owner")
        if owner and not is_among(owner, known):
            found.append(f"leads[{index}].owner: no person {owner!r} in people")
    for index, event in enumerate(rows_of(bundle.get("calendar_events"))):
        attendees = event.get("attendees")
        for position, username in enumerate(
            attendees if isinstance(attendees, list) else []
        ):
            if not is_among(username, known):
                found.append(
                    f"calendar_events[{index}].attendees[{position}]: "
                    f"no person {username!r} in people"
                )
    return found


def create_household(*, data: dict[str, Any]) -> Household:
    """Create the validated household, replacing one of the same slug with its rows.

    An import of the same new household running at once creates the slug
    first: this one then waits for it, and is refused once it has committed.
    """
    Household.objects.filter(slug=data["slug"]).delete()
    try:
        with transaction.atomic():
            return Household.objects.create(**data)
    except IntegrityError as error:
        raise ValidationError(
            {
                "household.slug": [
                    f"household {data['slug']!r} was created meanwhile by another "
                    "import; pass --replace to overwrite it"
                ]
            }
        ) from error


def import_rows(*, household: Household, data: dict[str, Any]) -> None:
    """Write the validated people, leads and calendar events of a bundle."""
    memberships = {
        person["username"]: create_member(
            household=household,
            **{k: v for k, v in person.items() if k not in PERSONAL_WORD_KEYS},
        )
        for person in data["people"]
    }

    leads = [
        {**lead, "owner": memberships.get(lead["owner"])} for lead in data["leads"]
    ]
    try:
        create_leads(household=household, rows=leads)
    except ValidationError as error:
        raise ValidationError(
            {f"leads{path}": messages for path, messages in error.message_dict.items()}
        ) from error

    create_calendar_events(
        household=household,
        rows=[
            {
                **event,
                "attendees": [memberships[u].profile for u in event["attendees"]],
            }
            for event in data["calendar_events"]
        ],
    )


def export_rows(*, household: Household) -> dict[str, Any]:
    """Return the household, its people, leads and events as import_rows reads them."""
    people = []
    for membership in (
        Membership.objects.filter(household=household)
        .select_related("profile")
        .order_by("profile_id")
    ):
        profile = membership.profile
        person = {
            "username": profile.username,
            "first_name": profile.first_name,
            "last_name": profile.last_name,
            "email": profile.email,
            "phone": profile.phone,
            "role": membership.role,
            "status": membership.status,
            "lead_access": membership.lead_access,
        }
        if profile.language:
            person["language"] = profile.language
        if profile.deleted_at:
            person["deleted_at"] = timestamp(profile.deleted_at)
        people.append(person)

    leads = [
        {
            "first_name": lead.first_name,
            "last_name": lead.last_name,
            "email": lead.email,
            "phone": lead.phone,
            "status": lead.status,
            "archived": lead.archived,
            "owner": lead.owner.profile.username if lead.owner else None,
        }
        for lead in household.leads.order_by("pk").prefetch_related(
            Prefetch("owner", Membership.objects.select_related("profile"))
        )
    ]

    events = [
        {
            "title": event.title,
            "starts_at": timestamp(event.starts_at),
            "ends_at": timestamp(event.ends_at),
            "location": event.location,
            "attendees": sorted(
                attendee.userprofile.username
                for attendee in event.eventattendee_set.all()
            ),
        }
        for event in household.calendar_events.order_by("pk").prefetch_related(
            Prefetch(
                "eventattendee_set",
                EventAttendee.objects.filter(household=household).prefetch_related(
                    "userprofile"
                ),
            )
        )
    ]

    return {
        "household": {
            "slug": household.slug,
            "name": household.name,
            "default_region": household.default_region,
            "language": household.language,
        },
        "people": people,
        "leads": leads,
        "calendar_events": events,
    }
