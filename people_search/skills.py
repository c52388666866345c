"""Skills that find people (find_person, people_search, search_anything) and
remember who a member means by their own words (remember_relation)."""

from typing import Any

from rest_framework import serializers

from contacts.cards import CONTACT_PICKER, picker_payload
from contacts.models import STATUS_FILTERS, ChannelKind, ContactKind
from contacts.selectors import MemberPickerRow, PickerRow, statuses_for
from household.callers import MemberCaller
from household.models import LeadStatus, MembershipStatus, Role
from people_search.engine.matching import Reason
from people_search.personal_words import find_target, remember_word
from people_search.selectors import find_person_rows, search_everything
from people_search.turns import people_search_answer
from yorik.registry import Answer, CardRequest, ToolAnnotations, skill
from yorik.serializers import (
    CardSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictListField,
    StrictSerializer,
    TaggedUnionField,
)

MATCHES = ["phone", "email", "name", "similar_name"]
PERSON_MATCHES = [reason.value for reason in Reason]
PERSON_MATCH_HELP = (
    "Why the row matched: name or alias (the query is, or starts, its words), "
    "relation (the relation or an alias names what the query names, in German "
    "or English: 'Oma', 'grandma', 'der Klempner'), nickname (a nickname or "
    "variant of a given name: 'Sepp' for Josef), email, phone, channel (the "
    "channel lookup), similar_name (a name that sounds or is spelled alike), "
    "learned (the caller's own word or name choice for this person, taught by "
    "remember_relation or a pick: such rows come first). Null when no query "
    "or channel was given."
)


class FindPersonInput(StrictSerializer):
    query = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text=(
            "Free text matched against names, first and last names and email, and "
            "for contacts also aliases and the relation, in German or English: "
            "articles, possessives and titles are ignored ('mein Steuerberater', "
            "'Frau Dr. Schmidt'), relation words match in either language "
            "('grandma' finds 'Großmutter'), nicknames find given names ('Sepp' "
            "finds Josef). Leave it out to list everyone in the source (mostly "
            "useful with source='household')."
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
    match = serializers.ChoiceField(
        PERSON_MATCHES, allow_null=True, help_text=PERSON_MATCH_HELP
    )


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
    match = serializers.ChoiceField(
        PERSON_MATCHES, allow_null=True, help_text=PERSON_MATCH_HELP
    )


class FindPersonOutput(serializers.Serializer):
    results = serializers.ListField(
        child=TaggedUnionField(
            component_name="FindPersonRow",
            tag="source",
            shapes={
                "household": HouseholdRowSerializer,
                "contacts": ContactRowSerializer,
            },
        ),
        help_text=(
            "Rows tagged with source, strongest match first: the whole name or "
            "alias, then names starting with the query's words, then relations "
            "naming it, nicknames, other fields; by name within each. Household "
            "rows: source, id (a user id), name, first_name, last_name, role, "
            "email, match. Contact rows: source, id (a contact id), display_name, "
            "relation, kind, channels, addresses, match. The two id spaces "
            "overlap: read source before reusing an id."
        ),
    )
    count = serializers.IntegerField(help_text="How many rows matched in all.")
    ambiguous = serializers.BooleanField(
        help_text=(
            "True when more than one row shares the strongest match: ask the "
            "user. Weaker rows after one strong match do not make it ambiguous, "
            "nor do the rows after exactly one learned row."
        )
    )
    card = CardSerializer(
        required=False,
        help_text=(
            "A contact_picker card, emitted when several contacts share the "
            "strongest match."
        ),
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
When `ambiguous` is true (several rows share the strongest match), stop and ask
the user instead of taking the first; each row's `match` says why it was found.
Contacts sharing the strongest match come with a picker card; for household rows,
list role and name and ask.
For a relational descriptor ("my friend", "der Klempner", "Oma") do not ask for a
name in prose: first try find_person(query="<descriptor>", source="contacts"),
which matches the relation field; with no hit, use list_contacts_for_picking's
two-call ranking flow (defer_card=true, then ranked_picks=[…]) and aim for 10 picks
(fewer are padded with recent contacts).
Rows with match="learned" are the caller's own word for that person (taught by
remember_relation or a pick on a card): they come first; when exactly one row is
learned the answer is not ambiguous, and the other candidates follow it.""",
    input_serializer=FindPersonInput,
    output_serializer=FindPersonOutput,
    cost=(
        "1 indexed SELECT per source: 1 for household or contacts, 2 for auto; "
        "1 more when the caller taught Yorik words of their own; "
        "when nobody matches by name, 1 similar-name lookup (1 SELECT, 2 past "
        "100 rows searched; and 1 of the managed children when household people "
        "are searched) and 1 "
        "more SELECT per source it found candidates in; when the best rows only "
        "start with a term, 1 SELECT of the names heard alike and, if there are "
        "any, 1 more per source; and one count of the household's rows every 5 "
        "minutes"
    ),
    permissions=["admin", "member", "restricted"],
    side_effects=(
        "May emit a contact_picker card when several contacts match. No other writes."
    ),
    tags=["users", "contacts", "lookup", "read"],
)
def find_person(
    caller: MemberCaller,
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
    found = find_person_rows(
        household=caller.household,
        query=query,
        source=source,
        statuses=statuses_for(status),
        limit=limit,
        kind=kind,
        role=role,
        channel_kind=channel_kind,
        channel_value=channel_value,
        speaker=caller.membership,
    )
    card = None
    if len(found.contact_ids) > 1:
        # The card lists the answer's rows in its order, household people too.
        rows = [
            MemberPickerRow(user_id=row["id"], match=row["match"] or "")
            if row["source"] == "household"
            else PickerRow(contact_id=row["id"], match=row["match"] or "")
            for row in found.rows
        ]
        card = CardRequest(CONTACT_PICKER, picker_payload(query, rows, ranked=False))
    return Answer(
        {"results": found.rows, "count": found.count, "ambiguous": found.ambiguous},
        card,
    )


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


PEOPLE_HITS = {"member": MemberHitSerializer, "lead": LeadHitSerializer}


class PeopleSearchOutput(serializers.Serializer):
    items = serializers.ListField(
        child=TaggedUnionField(
            component_name="PeopleHit", tag="kind", shapes=PEOPLE_HITS
        ),
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
    cost=(
        "2-4 indexed SELECTs (members, leads, and for similar names 1, or 2 past "
        "100 members and leads), and one count of the household's rows and name "
        "words every 5 minutes"
    ),
    permissions=["admin", "member", "restricted"],
    side_effects="Emits a people_results card. No other writes.",
    tags=["people", "members", "leads", "lookup", "read"],
)
def people_search(caller: MemberCaller, *, query: str) -> Answer:
    return people_search_answer(membership=caller.membership, query=query)


SCOPES = ["members", "leads", "contacts"]


class SearchAnythingInput(StrictSerializer):
    query = StrictCharField(
        max_length=100,
        allow_blank=True,
        help_text="What to look for; fewer than 2 characters find nothing.",
    )
    scopes = StrictListField(
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
        child=TaggedUnionField(
            component_name="SearchAnythingHit",
            tag="kind",
            shapes={**PEOPLE_HITS, "contact": ContactHitSerializer},
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
    cost=(
        "Up to 4 indexed SELECTs, 2-3 more (a similar-name lookup of 1, or 2 past "
        "100 contacts, and a SELECT) when no contact matches by name, 2 at most "
        "(names heard alike, and a SELECT if there are any) when the best "
        "contacts only start with a term, "
        "and one count of the household's rows and name words every 5 minutes"
    ),
    permissions=["admin", "member", "restricted"],
    side_effects="none — read only",
    tags=["people", "contacts", "search", "read"],
)
def search_anything(
    caller: MemberCaller, *, query: str, limit: int, scopes: list[str] = SCOPES
) -> Answer:
    items = search_everything(
        household=caller.household,
        actor=caller.membership,
        query=query,
        scopes=scopes,
        limit=limit,
    )
    return Answer({"items": items, "totalCount": len(items)})


class RememberRelationInput(StrictSerializer):
    contact_id = StrictIntegerField(
        required=False,
        min_value=1,
        help_text="A contact id, as find_person's contact rows give it.",
    )
    user_id = StrictIntegerField(
        required=False,
        min_value=1,
        help_text=(
            "A user id of another member of the household, as find_person's "
            "household rows give it. Give contact_id or user_id, not both."
        ),
    )
    word = StrictCharField(
        max_length=60,
        help_text=(
            "The caller's own word for the person, as they say it: 'Mutter', "
            "'Oma', 'mein Chef', 'meine Frau'. At least one letter."
        ),
    )
    forget = StrictBooleanField(
        default=False, help_text="True removes the word instead of storing it."
    )

    def validate_word(self, value: str) -> str:
        if not any(char.isalpha() for char in value):
            raise serializers.ValidationError("A word needs at least one letter.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("contact_id" in attrs) == ("user_id" in attrs):
            raise serializers.ValidationError(
                {"contact_id": "Give exactly one of contact_id and user_id."}
            )
        return attrs


class RememberedTargetSerializer(serializers.Serializer):
    source = serializers.ChoiceField(
        ["contacts", "household"], help_text="Which id space `id` is in."
    )
    id = serializers.IntegerField(help_text="The contact id or user id.")
    name = serializers.CharField()


class RememberRelationOutput(serializers.Serializer):
    remembered = serializers.BooleanField(
        help_text="Whether the word is remembered now (false after forget)."
    )
    word = serializers.CharField()
    target = RememberedTargetSerializer()


@skill(
    name="remember_relation",
    description=(
        "Remember the caller's own word for a contact or another household "
        "member ('Mutter', 'meine Frau'), or forget it."
    ),
    when_to_use="""\
Use when the user tells who they mean by a word of their own: "Ruth ist meine
Mutter", "with 'the boss' I mean Dana", or corrects a wrong guess ("nein, Oma ist
Gisela"). Find the person first with find_person and pass the row's id as
contact_id (contact rows) or user_id (household rows). The word is the caller's
alone: other members' queries never use it, and the shared relation of a contact
stays as it is. From then on find_person answers this caller's word with that
row first, match="learned". forget=true removes the word.""",
    input_serializer=RememberRelationInput,
    output_serializer=RememberRelationOutput,
    cost="2 indexed SELECTs (the target, the caller's word) and 1-2 writes",
    permissions=["admin", "member"],
    side_effects=(
        "Stores or removes one word of the caller's own; nothing shared changes."
    ),
    tags=["contacts", "users", "relations", "write"],
    annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=True),
)
def remember_relation(
    caller: MemberCaller,
    *,
    word: str,
    forget: bool,
    contact_id: int | None = None,
    user_id: int | None = None,
) -> Answer:
    target = find_target(
        speaker=caller.membership, contact_id=contact_id, user_id=user_id
    )
    remembered = remember_word(
        speaker=caller.membership, word=word, target=target, forget=forget
    )
    return Answer({"remembered": remembered, "word": word, "target": target.as_dict()})
