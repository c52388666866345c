"""Read and write a whole household as one JSON bundle (format `yorik.household/1`)."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone
from phonenumbers import SUPPORTED_REGIONS
from rest_framework import serializers

from compose.models import LetterTemplate, RecipientField
from contacts.aggregates import contact_document
from contacts.models import (
    AddressKind,
    ChannelKind,
    Contact,
    ContactKind,
    ContactStatus,
    PaperlessCorrespondent,
    PaperlessDocument,
    normalize_channel_value,
)
from contacts.services import create_contact
from household.models import (
    CalendarEvent,
    Household,
    Language,
    LeadAccess,
    LeadStatus,
    Membership,
    MembershipStatus,
    Role,
    validate_region,
)
from household.services import create_lead, create_member
from people_search.engine.phones import InvalidPhoneNumber, parse_phone
from yorik.serializers import StrictSerializer, flatten_errors

BUNDLE_FORMAT = "yorik.household/1"


class BundleError(Exception):
    """The bundle cannot be imported; `problems` lists each one with its JSON path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def read_bundle(path: Path) -> dict[str, Any]:
    """Return the parsed JSON of a bundle file, or raise BundleError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise BundleError([f"$: cannot read {path}: {error}"]) from error
    except json.JSONDecodeError as error:
        raise BundleError([f"$: not valid JSON: {error}"]) from error
    if not isinstance(data, dict):
        raise BundleError(["$: a bundle is a JSON object"])
    return data


# Serializers describe the bundle's shape; they validate and are never saved.


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


def text(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(allow_blank=True, default="", **kwargs)


class HouseholdPart(StrictSerializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    default_region = serializers.CharField(
        max_length=2, default="DE", validators=[validate_region]
    )
    language = serializers.ChoiceField(Language.choices, default=Language.GERMAN)


class PersonPart(StrictSerializer):
    username = serializers.RegexField(r"^[\w.@+-]+\Z", max_length=150)
    first_name = text(max_length=150)
    last_name = text(max_length=150)
    email = serializers.EmailField(allow_blank=True, default="")
    phone = PhoneField()
    role = serializers.ChoiceField(Role.choices, default=Role.MEMBER)
    status = serializers.ChoiceField(
        MembershipStatus.choices, default=MembershipStatus.ACTIVE
    )
    lead_access = serializers.ChoiceField(LeadAccess.choices, required=False)
    deleted_at = serializers.DateTimeField(allow_null=True, default=None)


class ChannelPart(StrictSerializer):
    kind = serializers.ChoiceField(ChannelKind.choices)
    value = serializers.CharField(max_length=254)
    label = text(max_length=64)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        region = self.context.get("region")
        if region:
            try:
                attrs["value"] = normalize_channel_value(
                    attrs["kind"], attrs["value"], region
                )
            except ValueError as error:
                raise serializers.ValidationError({"value": str(error)}) from error
        return attrs


class AddressPart(StrictSerializer):
    kind = serializers.ChoiceField(AddressKind.choices, default=AddressKind.HOME)
    line1 = text(max_length=200)
    line2 = text(max_length=200)
    postcode = text(max_length=20)
    city = text(max_length=100)
    country = text(max_length=100)


class ContactPart(StrictSerializer):
    ref = serializers.CharField(max_length=64, required=False)
    display_name = serializers.CharField(max_length=300)
    first_name = text(max_length=150)
    last_name = text(max_length=150)
    kind = serializers.ChoiceField(ContactKind.choices, default=ContactKind.PERSON)
    relation = text(max_length=200)
    status = serializers.ChoiceField(
        ContactStatus.choices, default=ContactStatus.ACTIVE
    )
    aliases = serializers.ListField(
        child=serializers.CharField(max_length=200), default=list
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), default=list
    )
    notes = text()
    last_contacted_at = serializers.DateTimeField(allow_null=True, default=None)
    channels = ChannelPart(many=True, default=list)
    addresses = AddressPart(many=True, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = {}
        for kind, count in Counter(a["kind"] for a in attrs["addresses"]).items():
            if count > 1:
                errors["addresses"] = f"more than one {kind} address"
        if len(set(attrs["aliases"])) != len(attrs["aliases"]):
            errors["aliases"] = "an alias is listed twice"
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


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


class CorrespondentPart(StrictSerializer):
    id = serializers.IntegerField(min_value=1)
    name = serializers.CharField(max_length=300)


class DocumentPart(StrictSerializer):
    id = serializers.IntegerField(min_value=1)
    title = serializers.CharField(max_length=500)
    correspondent = serializers.IntegerField(allow_null=True, default=None)
    created = serializers.DateField(allow_null=True, default=None)


class PaperlessPart(StrictSerializer):
    correspondents = CorrespondentPart(many=True, default=list)
    documents = DocumentPart(many=True, default=list)


class LetterTemplatePart(StrictSerializer):
    template_id = serializers.SlugField(max_length=100)
    title = serializers.CharField(max_length=200)
    language = serializers.ChoiceField(Language.choices, default=Language.GERMAN)
    body = serializers.CharField()
    recipient_fields = serializers.ListField(
        child=serializers.ChoiceField(RecipientField.choices), default=list
    )

    def validate_recipient_fields(self, value: list[str]) -> list[str]:
        if not {"line1", "city"} <= set(value):
            raise serializers.ValidationError("must include line1 and city")
        return value


class BundleSerializer(StrictSerializer):
    format = serializers.ChoiceField([BUNDLE_FORMAT])
    household = HouseholdPart()
    people = PersonPart(many=True, default=list)
    contacts = ContactPart(many=True, default=list)
    leads = LeadPart(many=True, default=list)
    calendar_events = EventPart(many=True, default=list)
    paperless = PaperlessPart(default=dict)
    letter_templates = LetterTemplatePart(many=True, default=list)


def _region_of(bundle: dict[str, Any]) -> str | None:
    household = bundle.get("household")
    if not isinstance(household, dict):
        return None
    region = household.get("default_region", "DE")
    # A bad region is reported by HouseholdPart; phones are then left unchecked.
    return region if region in SUPPORTED_REGIONS else None


def validate_bundle(bundle: dict[str, Any], *, replace: bool) -> dict[str, Any]:
    """Return the bundle's validated data, or raise BundleError with every problem."""
    serializer = BundleSerializer(data=bundle, context={"region": _region_of(bundle)})
    problems = []
    if not serializer.is_valid():
        problems = [
            f"{path}: {message}" for path, message in flatten_errors(serializer.errors)
        ]
    # Cross-row checks read the raw input so they run even when a row is bad.
    problems += _reference_problems(bundle, replace=replace)
    if problems:
        raise BundleError(problems)
    return serializer.validated_data


def _duplicates(values: list[Any]) -> set[Any]:
    return {value for value, count in Counter(values).items() if count > 1}


def _reference_problems(data: dict[str, Any], *, replace: bool) -> list[str]:
    """Return problems that span rows: duplicates, dangling references, clashes."""

    def rows(key: str) -> list[dict[str, Any]]:
        value = data.get(key)
        return (
            [row for row in value if isinstance(row, dict)]
            if isinstance(value, list)
            else []
        )

    problems = []
    household = data.get("household") if isinstance(data.get("household"), dict) else {}
    slug = household.get("slug")
    existing = (
        Household.objects.filter(slug=slug).first() if isinstance(slug, str) else None
    )
    if existing and not replace:
        problems.append(
            f"household.slug: household {slug!r} exists already; "
            "pass --replace to overwrite it"
        )

    people = rows("people")
    usernames = [p.get("username") for p in people]
    duplicate_names = _duplicates(usernames)
    logins_elsewhere = get_user_model().objects.filter(
        username__in=[u for u in usernames if isinstance(u, str)],
        profile__isnull=False,
    )
    if existing:
        logins_elsewhere = logins_elsewhere.exclude(profile__household=existing)
    taken = set(logins_elsewhere.values_list("username", flat=True))
    for index, username in enumerate(usernames):
        if username in duplicate_names:
            problems.append(f"people[{index}].username: {username!r} is listed twice")
        if username in taken:
            problems.append(
                f"people[{index}].username: login {username!r} belongs to another "
                "household"
            )
    known = set(usernames)

    refs = [c.get("ref") for c in rows("contacts") if c.get("ref") is not None]
    for index, contact in enumerate(rows("contacts")):
        if contact.get("ref") is not None and contact["ref"] in _duplicates(refs):
            problems.append(
                f"contacts[{index}].ref: {contact['ref']!r} is listed twice"
            )

    for index, lead in enumerate(rows("leads")):
        owner = lead.get("owner")
        if owner and owner not in known:
            problems.append(f"leads[{index}].owner: no person {owner!r} in people")
    for index, event in enumerate(rows("calendar_events")):
        attendees = (
            event.get("attendees") if isinstance(event.get("attendees"), list) else []
        )
        for position, username in enumerate(attendees):
            if username not in known:
                problems.append(
                    f"calendar_events[{index}].attendees[{position}]: "
                    f"no person {username!r} in people"
                )

    paperless = data.get("paperless") if isinstance(data.get("paperless"), dict) else {}
    correspondents = [
        c for c in paperless.get("correspondents") or [] if isinstance(c, dict)
    ]
    correspondent_ids = [c.get("id") for c in correspondents]
    for index, correspondent_id in enumerate(correspondent_ids):
        if correspondent_id in _duplicates(correspondent_ids):
            problems.append(
                f"paperless.correspondents[{index}].id: "
                f"{correspondent_id} is listed twice"
            )
    documents = [d for d in paperless.get("documents") or [] if isinstance(d, dict)]
    document_ids = [d.get("id") for d in documents]
    for index, document in enumerate(documents):
        if document.get("id") in _duplicates(document_ids):
            problems.append(
                f"paperless.documents[{index}].id: {document['id']} is listed twice"
            )
        correspondent = document.get("correspondent")
        if correspondent is not None and correspondent not in correspondent_ids:
            problems.append(
                f"paperless.documents[{index}].correspondent: "
                f"no correspondent {correspondent}"
            )

    template_ids = [t.get("template_id") for t in rows("letter_templates")]
    for index, template_id in enumerate(template_ids):
        if template_id in _duplicates(template_ids):
            problems.append(
                f"letter_templates[{index}].template_id: "
                f"{template_id!r} is listed twice"
            )
    return problems


@transaction.atomic
def import_household(*, bundle: dict[str, Any], replace: bool = False) -> Household:
    """Create the household a bundle describes, all or nothing.

    Raise BundleError listing every problem, with its JSON path, and write nothing.
    """
    data = validate_bundle(bundle, replace=replace)
    Household.objects.filter(slug=data["household"]["slug"]).delete()
    household = Household.objects.create(**data["household"])

    memberships = {
        person["username"]: create_member(household=household, **person)
        for person in data["people"]
    }

    for contact in data["contacts"]:
        create_contact(household=household, **contact)

    for lead in data["leads"]:
        owner = lead.pop("owner")
        create_lead(household=household, owner=memberships.get(owner), **lead)

    for event in data["calendar_events"]:
        attendees = event.pop("attendees")
        created = CalendarEvent.objects.create(household=household, **event)
        created.attendees.set([memberships[u].profile for u in attendees])

    correspondents = {
        row["id"]: PaperlessCorrespondent.objects.create(
            household=household, paperless_id=row["id"], name=row["name"]
        )
        for row in data["paperless"].get("correspondents", [])
    }
    PaperlessDocument.objects.bulk_create(
        PaperlessDocument(
            household=household,
            paperless_id=row["id"],
            title=row["title"],
            correspondent=correspondents.get(row["correspondent"]),
            created=row["created"],
        )
        for row in data["paperless"].get("documents", [])
    )

    LetterTemplate.objects.bulk_create(
        LetterTemplate(household=household, **template)
        for template in data["letter_templates"]
    )
    return household


def _timestamp(value: Any) -> str | None:
    if value is None:
        return None
    value = timezone.localtime(value)
    return value.isoformat().replace("+00:00", "Z")


def export_household(*, household: Household) -> dict[str, Any]:
    """Return the household as a bundle that import_household reads back unchanged."""
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
        if profile.deleted_at:
            person["deleted_at"] = _timestamp(profile.deleted_at)
        people.append(person)

    contacts = [
        {
            "ref": contact.ref,
            **contact_document(contact),
            "last_contacted_at": _timestamp(contact.last_contacted_at),
        }
        for contact in Contact.objects.filter(household=household)
        .order_by("pk")
        .prefetch_related(
            _ordered("aliases"), _ordered("channels"), _ordered("addresses")
        )
    ]

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
        for lead in household.leads.order_by("pk").select_related("owner__profile")
    ]

    events = [
        {
            "title": event.title,
            "starts_at": _timestamp(event.starts_at),
            "ends_at": _timestamp(event.ends_at),
            "location": event.location,
            "attendees": sorted(p.username for p in event.attendees.all()),
        }
        for event in household.calendar_events.order_by("pk").prefetch_related(
            "attendees"
        )
    ]

    return {
        "format": BUNDLE_FORMAT,
        "household": {
            "slug": household.slug,
            "name": household.name,
            "default_region": household.default_region,
            "language": household.language,
        },
        "people": people,
        "contacts": contacts,
        "leads": leads,
        "calendar_events": events,
        "paperless": {
            "correspondents": [
                {"id": c.paperless_id, "name": c.name}
                for c in PaperlessCorrespondent.objects.filter(
                    household=household
                ).order_by("paperless_id")
            ],
            "documents": [
                {
                    "id": d.paperless_id,
                    "title": d.title,
                    "correspondent": d.correspondent.paperless_id
                    if d.correspondent
                    else None,
                    "created": d.created.isoformat() if d.created else None,
                }
                for d in PaperlessDocument.objects.filter(household=household)
                .select_related("correspondent")
                .order_by("paperless_id")
            ],
        },
        "letter_templates": [
            {
                "template_id": t.template_id,
                "title": t.title,
                "language": t.language,
                "body": t.body,
                "recipient_fields": t.recipient_fields,
            }
            for t in household.letter_templates.order_by("pk")
        ],
    }


def _ordered(relation: str) -> Prefetch:
    model = Contact._meta.get_field(relation).related_model
    return Prefetch(relation, queryset=model.objects.order_by("pk"))
