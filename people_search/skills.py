"""Skills that find people: find_person, people_search and search_anything."""

from typing import Any

from django.core.exceptions import ValidationError
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from contacts.models import (
    DEFAULT_CONTACT_STATUSES,
    STATUS_FILTERS,
    ChannelKind,
    ContactKind,
    normalize_channel_value,
)
from contacts.selectors import PickerRow
from household.models import LeadStatus, MembershipStatus, Role
from people_search.engine.matching import parse_query
from people_search.selectors import (
    MIN_QUERY_LENGTH,
    find_contacts,
    find_household_people,
    merge_found,
    search_people,
)
from people_search.turns import people_search_answer
from yorik.callers import Caller
from yorik.registry import Answer, CardRequest, skill
from yorik.serializers import (
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictSerializer,
)

MATCHES = ["phone", "email", "name", "similar_name"]


class CardSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    url = serializers.URLField()


class FindPersonInput(StrictSerializer):
    query = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text=(
            "Free text matched against names, first and last names and email, and "
            "for contacts also aliases and the relation. Leave it out to list "
            "everyone in the source (mostly useful with source='household')."
        ),
    )
    source = StrictChoiceField(
        ["auto", "household", "contacts"],
        default="auto",
        help_text=(
            "'household' searches the household's people and returns user ids "
            "for attendees; 'contacts' searches the address book and returns "
            "channels and postal addresses for messages and letters; 'auto' "
            "searches both and tags every row with its source."
        ),
    )
    kind = StrictChoiceField(
        ContactKind.choices,
        required=False,
        help_text="Contacts only: 'person' or 'business'. Ignored for household rows.",
    )
    role = StrictChoiceField(
        Role.choices,
        required=False,
        help_text="Household only: the member's role. Ignored for contacts.",
    )
    status = StrictChoiceField(
        STATUS_FILTERS,
        default="any",
        help_text=(
            "Contacts only. 'any' means active and pending; spam and archived "
            "contacts are found only when asked for by name."
        ),
    )
    channel_kind = StrictChoiceField(
        ChannelKind.choices,
        required=False,
        help_text=(
            "Contacts only: look a contact up by a channel. Give channel_value "
            "too, e.g. channel_kind='phone', channel_value='+49 30 1234567'."
        ),
    )
    channel_value = StrictCharField(
        required=False,
        max_length=254,
        help_text="The channel's value; phones are read in the household's region.",
    )
    limit = StrictIntegerField(
        default=10, min_value=1, max_value=50, help_text="Most rows to return."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("channel_kind" in attrs) != ("channel_value" in attrs):
            missing = "channel_value" if "channel_kind" in attrs else "channel_kind"
            raise serializers.ValidationError(
                {missing: "channel_kind and channel_value go together."}
            )
        return attrs


class HouseholdRowSerializer(serializers.Serializer):
    source = serializers.ChoiceField(["household"])
    id = serializers.IntegerField(help_text="The user id, for attendee_user_ids.")
    name = serializers.CharField()
    first_name = serializers.CharField()
    last_name = serializers.CharField()
    role = serializers.ChoiceField(Role.choices)
    email = serializers.CharField()


class ChannelSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(ChannelKind.choices)
    value = serializers.CharField()
    label = serializers.CharField()


class AddressSerializer(serializers.Serializer):
    kind = serializers.CharField()
    line1 = serializers.CharField()
    line2 = serializers.CharField()
    postcode = serializers.CharField()
    city = serializers.CharField()
    country = serializers.CharField()


class ContactRowSerializer(serializers.Serializer):
    source = serializers.ChoiceField(["contacts"])
    id = serializers.IntegerField(help_text="The contact id; never a user id.")
    display_name = serializers.CharField()
    relation = serializers.CharField()
    kind = serializers.ChoiceField(ContactKind.choices)
    channels = ChannelSerializer(many=True)
    addresses = AddressSerializer(many=True)


class FindPersonOutput(serializers.Serializer):
    results = serializers.ListField(
        child=PolymorphicProxySerializer(
            component_name="FindPersonRow",
            # A mapping: drf-spectacular cannot read a ChoiceField's one value.
            serializers={
                "household": HouseholdRowSerializer,
                "contacts": ContactRowSerializer,
            },
            resource_type_field_name="source",
        ),
        help_text=(
            "Rows tagged with source. Household rows: source, id (a user id), "
            "name, first_name, last_name, role, email. Contact rows: source, id "
            "(a contact id), display_name, relation, kind, channels, addresses. "
            "The two id spaces overlap: read source before reusing an id."
        ),
    )
    count = serializers.IntegerField(help_text="How many rows matched in all.")
    ambiguous = serializers.BooleanField(
        help_text="True when more than one candidate matched: ask the user."
    )
    card = CardSerializer(
        required=False,
        help_text="A contact_picker card, emitted when several contacts matched.",
    )


@skill(
    name="find_person",
    description=(
        "Find a person by name. source='household' gives user ids (attendees); "
        "source='contacts' gives chat ids, email and postal addresses."
    ),
    when_to_use="""\
Use for every "find X", "wer ist X?", "Termin mit X" or "schreib X".
Pick `source` by what happens next, not by who the person seems to be:
- adding calendar attendees or RSVPs → source="household"; pass the row's id as
  attendee_user_ids=[id];
- WhatsApp, email or a letter (whatsapp_draft, email_draft, compose_draft) →
  source="contacts"; you get channels, addresses and a contact_id, which is NOT a
  user id;
- not sure yet, or the user only asked who someone is → source="auto" (the
  default): both, each row tagged with `source`, so decide when you use it.
A contact id is never a valid attendee_user_ids value: the two tables' ids overlap.
Always read `source` before reusing an `id`.
When several candidates match, stop and ask the user instead of taking the first.
Several contacts come with a picker card; for household rows, list role and name and
ask.
For a relational descriptor ("my friend", "der Klempner", "Oma") do not ask for a
name in prose: first try find_person(query="<descriptor>", source="contacts"),
which matches the relation field; with no hit, use list_contacts_for_picking's
two-call ranking flow (defer_card=true, then ranked_picks=[…]) and aim for 10 picks
(fewer are padded with recent contacts).""",
    input_serializer=FindPersonInput,
    output_serializer=FindPersonOutput,
    cost="1 indexed SELECT per source: 1 for household or contacts, 2 for auto",
    permissions=["admin", "member", "restricted"],
    side_effects=(
        "May emit a contact_picker card when several contacts match. No other writes."
    ),
    tags=["users", "contacts", "lookup", "read"],
)
def find_person(
    caller: Caller,
    *,
    query: str = "",
    source: str,
    status: str,
    limit: int,
    kind: str | None = None,
    role: str | None = None,
    channel_kind: str | None = None,
    channel_value: str | None = None,
) -> Answer:
    household = caller.household
    parsed = parse_query(query, region=household.default_region) if query else None
    channel = None
    if channel_kind and channel_value:
        try:
            channel = (
                channel_kind,
                normalize_channel_value(
                    channel_kind, channel_value, household.default_region
                ),
            )
        except ValueError as error:
            raise ValidationError({"channel_value": str(error)}) from error
    found = []
    # A channel lookup is about contacts; in auto mode it must not list every
    # household member just because no query was given.
    if source == "household" or (source == "auto" and (parsed or not channel)):
        found.append(
            find_household_people(
                household=household, query=parsed, role=role, limit=limit
            )
        )
    contacts = None
    if source in ("contacts", "auto"):
        contacts = find_contacts(
            household=household,
            query=parsed,
            kind=kind,
            statuses=DEFAULT_CONTACT_STATUSES if status == "any" else (status,),
            channel=channel,
            limit=limit,
        )
        found.append(contacts)
    rows, count = merge_found(found, limit=limit)
    card = None
    if contacts is not None and contacts.count > 1:
        card = CardRequest(
            kind="contact_picker",
            payload={
                "query": query,
                "ranked": False,
                "picks": [
                    PickerRow(contact_id=match.row["id"]).as_payload()
                    for match in contacts.matches
                ],
            },
        )
    return Answer({"results": rows, "count": count, "ambiguous": count > 1}, card)


class PeopleSearchInput(StrictSerializer):
    query = StrictCharField(
        max_length=100,
        allow_blank=True,
        help_text=(
            "A name, an email, a phone number (whole or partial) or a name as it "
            "sounds. Fewer than 2 characters find nothing; more than 100 are refused."
        ),
    )


MATCH_HELP = (
    "How the row was found: phone, email or name (literal), or similar_name "
    "(a name that sounds or is spelled alike)."
)


class MemberHitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["member"])
    membership_id = serializers.IntegerField()
    profile_id = serializers.IntegerField()
    name = serializers.CharField()
    email = serializers.CharField()
    phone = serializers.CharField(help_text="E.164, or empty.")
    role = serializers.ChoiceField(Role.choices)
    status = serializers.ChoiceField(MembershipStatus.choices)
    match = serializers.ChoiceField(MATCHES, help_text=MATCH_HELP)


class LeadHitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["lead"])
    lead_id = serializers.IntegerField()
    name = serializers.CharField()
    email = serializers.CharField()
    phone = serializers.CharField(help_text="E.164, or empty.")
    status = serializers.ChoiceField(LeadStatus.choices)
    archived = serializers.BooleanField()
    match = serializers.ChoiceField(MATCHES, help_text=MATCH_HELP)


PeopleHitSerializer = PolymorphicProxySerializer(
    component_name="PeopleHit",
    serializers={"member": MemberHitSerializer, "lead": LeadHitSerializer},
    resource_type_field_name="kind",
)


class PeopleSearchOutput(serializers.Serializer):
    items = serializers.ListField(
        child=PeopleHitSerializer,
        help_text=(
            "Members first, then leads; at most 8 of each. Literal matches come "
            "before similar names, each by name."
        ),
    )
    totalCount = serializers.IntegerField(  # camelCase: the spec names it so
        help_text="Number of items."
    )
    card = CardSerializer(help_text="The people_results card showing the answer.")


@skill(
    name="people_search",
    description=(
        "Search the household's members and leads by name, email, phone or a "
        "similar-sounding name."
    ),
    when_to_use="""\
Use when the user looks for a member of the household (family, staff) or a lead by
name ("find Dana"), by email, by phone number (whole or partial, any format), or
spells a name only roughly. The answer is a card: do not read the rows out; the
card shows names, email · phone, role or lead status and marks similar names.
Leads appear only as far as the caller's lead access allows.""",
    input_serializer=PeopleSearchInput,
    output_serializer=PeopleSearchOutput,
    cost="2-3 indexed SELECTs (members, leads, similar names)",
    permissions=["admin", "member", "restricted"],
    side_effects="Emits a people_results card. No other writes.",
    tags=["people", "members", "leads", "lookup", "read"],
)
def people_search(caller: Caller, *, query: str) -> Answer:
    return people_search_answer(membership=caller.membership, query=query)


SCOPES = ["members", "leads", "contacts"]


class SearchAnythingInput(StrictSerializer):
    query = StrictCharField(
        max_length=100,
        allow_blank=True,
        help_text="What to look for; fewer than 2 characters find nothing.",
    )
    scopes = serializers.ListField(
        child=StrictChoiceField(SCOPES),
        required=False,
        allow_empty=False,  # its message reads better than min_length's
        min_length=1,  # documents minItems in the schemas
        max_length=len(SCOPES),
        help_text=(
            "Where to look: members, leads, contacts (default: all). Any people "
            "scope searches both members and leads, with people search's rules."
        ),
    )
    limit = StrictIntegerField(
        default=10,
        min_value=1,
        max_value=50,
        help_text="Most contacts to return. Members and leads stay at 8 each.",
    )


class ContactHitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["contact"])
    contact_id = serializers.IntegerField()
    name = serializers.CharField()
    relation = serializers.CharField()
    contact_kind = serializers.ChoiceField(ContactKind.choices)


class SearchAnythingOutput(serializers.Serializer):
    items = serializers.ListField(
        child=PolymorphicProxySerializer(
            component_name="SearchAnythingHit",
            serializers={
                "member": MemberHitSerializer,
                "lead": LeadHitSerializer,
                "contact": ContactHitSerializer,
            },
            resource_type_field_name="kind",
        ),
        help_text="Members, then leads, then contacts; each row says its kind.",
    )
    totalCount = serializers.IntegerField(  # camelCase: as people_search names it
        help_text="Number of items."
    )


@skill(
    name="search_anything",
    description="Search members, leads and the address book at once.",
    when_to_use="""\
Use when the user's words could name anyone the household knows and you do not
know where to look. Members and leads follow people search's rules (at most 8 of
each, archived leads marked, leads only as the caller's lead access allows);
contacts come from the address book. For one specific person prefer find_person,
for members and leads only people_search.""",
    input_serializer=SearchAnythingInput,
    output_serializer=SearchAnythingOutput,
    cost="Up to 4 indexed SELECTs",
    permissions=["admin", "member", "restricted"],
    side_effects="none — read only",
    tags=["people", "contacts", "search", "read"],
)
def search_anything(
    caller: Caller, *, query: str, limit: int, scopes: list[str] = SCOPES
) -> Answer:
    items = []
    if {"members", "leads"} & set(scopes):
        found = search_people(
            household=caller.household, actor=caller.membership, query=query
        )
        items += [*found.members, *found.leads]
    parsed = parse_query(query, region=caller.household.default_region)
    if "contacts" in scopes and len(parsed.text) >= MIN_QUERY_LENGTH:
        contacts = find_contacts(household=caller.household, query=parsed, limit=limit)
        items += [
            {
                "kind": "contact",
                "contact_id": match.row["id"],
                "name": match.row["display_name"],
                "relation": match.row["relation"],
                "contact_kind": match.row["kind"],
            }
            for match in contacts.matches
        ]
    return Answer({"items": items, "totalCount": len(items)})
