"""Skills of the address book: list_contacts_for_picking, find_known_provider."""

from typing import Any

from rest_framework import serializers

from contacts.cards import CONTACT_PICKER, CONTACTS_FOUND, picker_payload
from contacts.models import STATUS_FILTERS, ContactKind
from contacts.providers.categories import (
    CATEGORIES,
    UnknownCategory,
    get_category,
    resolve_category,
)
from contacts.providers.search import MAX_CANDIDATES, SOURCES, find_known_providers
from contacts.selectors import (
    BROWSE_BYTES,
    BROWSE_ROWS,
    MAX_PICKS,
    find_picker_rows,
    list_address_book,
    statuses_for,
)
from household.callers import MemberCaller
from yorik.registry import Answer, CardRequest, skill
from yorik.serializers import (
    CardSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictFloatField,
    StrictIntegerField,
    StrictSerializer,
)


class RankedPickInput(StrictSerializer):
    id = StrictIntegerField(help_text="A contact id from the browse call.")
    confidence = StrictFloatField(
        min_value=0,
        max_value=1,
        help_text=(
            "How sure the pick is, 0.0 to 1.0: 0.95 or more for an unambiguous "
            "relation or alias match, 0.30 or less for a long shot."
        ),
    )
    reason = StrictCharField(
        max_length=200,
        allow_blank=True,
        default="",
        help_text='Why this contact, shown under the name (e.g. "Relation: Oma").',
    )


class ListContactsForPickingInput(StrictSerializer):
    pick_to_chat = StrictBooleanField(
        default=True,
        help_text=(
            "True (the default, for writing or drafting): a click on the card "
            "sends the pick back to the chat. False only for a plain browse "
            "('zeig mir alle Kontakte'): a click opens the contact's page."
        ),
    )
    status = StrictChoiceField(
        STATUS_FILTERS,
        default="any",
        help_text=(
            "'any' (active and pending), 'active', 'pending', 'spam' or "
            "'archived'. Spam and archived contacts are never part of 'any'."
        ),
    )
    kind = StrictChoiceField(
        ContactKind.choices,
        required=False,
        help_text="Only 'person' or only 'business' contacts; leave out for both.",
    )
    defer_card = StrictBooleanField(
        default=False,
        help_text=(
            "True in the first call of the ranking flow: return the list without "
            "emitting the alphabetical contacts_found card."
        ),
    )
    ranked_picks = RankedPickInput(
        many=True,
        required=False,
        max_length=MAX_PICKS,
        help_text=(
            f"Render mode: your picks {{id, confidence, reason}}, best first, aim "
            f"for {MAX_PICKS}, at most {MAX_PICKS}. Emits the ranked "
            "contact_picker card instead of listing contacts."
        ),
    )
    query = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text=(
            "The user's own words (\"Oma\"), shown as the ranked card's header. "
            "It filters nothing."
        ),
    )


class ContactBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The contact id; never a user id.")
    display_name = serializers.CharField()
    relation = serializers.CharField()
    kind = serializers.ChoiceField(ContactKind.choices)


class ListContactsForPickingOutput(serializers.Serializer):
    count = serializers.IntegerField(
        required=False,
        help_text="Browse only: how many contacts match, listed or not.",
    )
    contacts = ContactBriefSerializer(
        many=True,
        required=False,
        help_text=(
            "Browse only: the matching contacts as {id, display_name, relation, "
            "kind}, alphabetically (the first ones when truncated). No channels, "
            "no addresses."
        ),
    )
    truncated = serializers.BooleanField(
        required=False,
        help_text=(
            f"Browse only, and only when true: the address book has more than "
            f"the {BROWSE_ROWS:,} contacts listed (or more than fit in "
            f"{BROWSE_BYTES // 1000} KB): `contacts` holds the first ones in "
            "alphabetical order, `count` all of them. Narrow with status or kind, "
            "or use find_person."
        ),
    )
    rendered = serializers.IntegerField(
        required=False,
        help_text="Render only: how many of your picks the card shows.",
    )
    dropped = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text=(
            "Render only: ids the caller cannot see, left off the card. If any, "
            "list again with defer_card=true and re-rank."
        ),
    )
    padded = serializers.IntegerField(
        required=False,
        help_text="Render only: neutral recent contacts added to reach 5 rows.",
    )
    card = CardSerializer(
        required=False,
        help_text="The contacts_found or contact_picker card, unless deferred.",
    )


@skill(
    name="list_contacts_for_picking",
    description=(
        "List the address book for the user to pick from, or render your ranked "
        "picks as a picker card."
    ),
    when_to_use="""\
Browse: the user says "zeig mir / show me / list / alle Kontakte", with or without a
filter. Call it once (pick_to_chat=false for a plain browse); it emits the
alphabetical contacts_found card.
Relational descriptor ("Oma", "der Klempner", "mein Steuerberater"): run the two-call
ranking flow, whatever find_person answered before:
1. list_contacts_for_picking(defer_card=true) returns the whole address book and no
   card.
2. list_contacts_for_picking(query="<descriptor>", ranked_picks=[{id, confidence,
   reason}, ...]) with your top 10, most confident first, emits the ranked picker
   card. Score 0.0..1.0 honestly: 0.95+ for an unambiguous relation or alias match,
   0.30 or less for a long shot. Fewer than 5 picks are padded with recent contacts.
Not for a specific known name ("schreibe an Lilian Wende"): use find_person.
Once a card is emitted, do not list the names in your reply: the card shows them.""",
    input_serializer=ListContactsForPickingInput,
    output_serializer=ListContactsForPickingOutput,
    cost=(
        "Browse: 1 indexed SELECT (a COUNT too past the row cap), about 30 "
        "characters per contact. Render: 2 SELECTs"
    ),
    permissions=["admin", "member", "restricted"],
    side_effects=(
        "Browse emits a contacts_found card (unless defer_card); ranked_picks "
        "emits a contact_picker card with ranked=true. No other writes."
    ),
    tags=["contacts", "lookup", "fallback"],
)
def list_contacts_for_picking(
    caller: MemberCaller,
    *,
    pick_to_chat: bool,
    status: str,
    defer_card: bool,
    kind: str | None = None,
    ranked_picks: list[dict[str, Any]] | None = None,
    query: str = "",
) -> Answer:
    household = caller.household
    if ranked_picks is not None:
        picker = find_picker_rows(household=household, ranked_picks=ranked_picks)
        payload = picker_payload(query, picker.rows, ranked=True)
        return Answer(
            {
                "rendered": picker.rendered,
                "dropped": picker.dropped,
                "padded": picker.padded,
            },
            CardRequest(CONTACT_PICKER, payload, pick_to_chat=pick_to_chat),
        )
    book = list_address_book(
        household=household, statuses=statuses_for(status), kind=kind
    )
    card = None
    if not defer_card:
        card = CardRequest(
            CONTACTS_FOUND,
            {"status": status, "kind": kind},
            pick_to_chat=pick_to_chat,
        )
    data = {"count": book.count, "contacts": book.rows}
    if book.truncated:
        data["truncated"] = True
    return Answer(data, card)


def _category_help() -> str:
    names = "; ".join(
        f"{category.id} ({category.name_en}, {category.name_de})"
        for category in CATEGORIES
    )
    return (
        f"The kind of provider: {names}. Synonyms in English or German work too "
        '("Hausärztin", "Friseur", "Werkstatt", "Kieferorthopäde"), in any case, '
        "with or without umlauts."
    )


class FindKnownProviderInput(StrictSerializer):
    category = StrictCharField(max_length=100, help_text=_category_help())

    def validate_category(self, value: str) -> str:
        try:
            return resolve_category(value).id
        except UnknownCategory as error:
            raise serializers.ValidationError(str(error)) from error


class ProviderCandidateSerializer(serializers.Serializer):
    source = serializers.ChoiceField(
        SOURCES, help_text="The most trusted source the provider was found in."
    )
    contact_id = serializers.IntegerField(
        required=False, help_text="Contacts only: the contact id; never a user id."
    )
    name = serializers.CharField()
    address = serializers.CharField(required=False)
    phone = serializers.CharField(required=False, help_text="E.164.")
    email = serializers.CharField(required=False)
    last_seen = serializers.DateField(
        required=False, help_text="Date of the latest document, event or contact."
    )
    evidence = serializers.CharField(
        help_text='What was found where, e.g. "relation: mein Zahnarzt".'
    )


class SourceCountsSerializer(serializers.Serializer):
    contacts = serializers.IntegerField()
    paperless = serializers.IntegerField()
    calendar = serializers.IntegerField()


class FindKnownProviderOutput(serializers.Serializer):
    candidates = ProviderCandidateSerializer(
        many=True,
        help_text=(
            "The household's providers of the category, most trusted source "
            "first, then most recently seen. A provider found in several sources "
            "is one candidate with the evidence of each."
        ),
    )
    source_counts = SourceCountsSerializer(
        help_text="How many providers each source found, before merging."
    )
    truncated = serializers.BooleanField(
        required=False,
        help_text=(
            f"Only when true: more than {MAX_CANDIDATES} providers were found and "
            f"`candidates` holds the {MAX_CANDIDATES} most trusted. Ask the user for "
            "a name, then use find_person."
        ),
    )


@skill(
    name="find_known_provider",
    description=(
        "Find the provider the household already uses for a category (dentist, "
        "garage, hairdresser, …) in its contacts, Paperless documents and past "
        "calendar events."
    ),
    when_to_use="""\
Whenever the user names a kind of provider without naming one ("Zahnarzttermin am
Dienstag", "ich muss zum Optiker", "Termin beim Friseur", "mein Steuerberater"), call
this before searching the internet: find_known_provider(category="dentist").
- 1 candidate: use it (e.g. for add_calendar_event).
- Several: ask the user which one (mention relation or last_seen); do not silently
  take the first.
- None: fall through to find_provider_nearby(poi=…, near=…).""",
    input_serializer=FindKnownProviderInput,
    output_serializer=FindKnownProviderOutput,
    cost=(
        "5 indexed SELECTs: contacts, Paperless documents and correspondents, "
        "events, then the addresses and emails of the contacts shown"
    ),
    permissions=["admin", "member", "restricted"],
    side_effects="none — read only.",
    tags=["contacts", "paperless", "calendar", "provider", "search"],
)
def find_known_provider(caller: MemberCaller, *, category: str) -> Answer:
    found = find_known_providers(
        household=caller.household, category=get_category(category)
    )
    data = {
        "candidates": [candidate.as_output() for candidate in found.candidates],
        "source_counts": found.source_counts,
    }
    if found.truncated:
        data["truncated"] = True
    return Answer(data)
