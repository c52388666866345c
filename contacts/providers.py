"""Find the providers a household already uses, before anyone searches nearby.

Three sources, in order of trust: the address book, the Paperless-ngx mirror
and past calendar events. SQL narrows each source with the category's stems,
matched against columns folded when the row was written (nothing is folded in
SQL, so trigram indexes serve the match); provider_categories decides word by
word which rows really reveal it. The same provider found in several places
becomes one candidate.
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Count, F, Max, OuterRef, Q, Subquery
from django.utils import timezone

from contacts.addresses import best_postal_address
from contacts.aggregates import addresses_array, channels_array
from contacts.models import (
    ChannelKind,
    Contact,
    ContactChannel,
    ContactKind,
    ContactStatus,
    PaperlessCorrespondent,
    PaperlessDocument,
    one_line_address,
)
from contacts.provider_categories import ProviderCategory
from household.models import CalendarEvent, Household
from people_search.engine.text import fold_name, fold_words

SOURCES = ("contact", "paperless", "calendar")
# Enough to ask the person which one; a household with more is cut, best first.
MAX_CANDIDATES = 10
# Words that say what a business is rather than who: two names that differ
# only in these ("Autohaus Krüger GmbH", "Autowerkstatt Krüger") are one.
_GENERIC_NAME_WORDS = frozenset(
    {
        "ag",
        "am",
        "an",
        "and",
        "co",
        "dent",
        "der",
        "die",
        "dr",
        "e",
        "ev",
        "fur",
        "gbr",
        "gmbh",
        "im",
        "in",
        "kg",
        "mbb",
        "mbh",
        "med",
        "ohg",
        "partner",
        "praxis",
        "prof",
        "s",
        "the",
        "ug",
        "und",
        "v",
        "vet",
    }
)
_STREET_ABBREVIATION = re.compile(r"str\.")


@dataclass
class Candidate:
    """A provider found in one source, or several merged into one."""

    source: str
    name: str
    evidence: list[str]
    contact_id: int | None = None
    address: str | None = None
    phone: str | None = None
    email: str | None = None
    last_seen: date | None = None
    phones: frozenset[str] = frozenset()
    places: tuple[str, ...] = ()

    @property
    def folded_name(self) -> str:
        return " ".join(fold_words(self.name))

    def as_output(self) -> dict[str, Any]:
        """Return the candidate as the skill answers it, without empty keys."""
        output = {
            "source": self.source,
            "contact_id": self.contact_id,
            "name": self.name,
            "address": self.address,
            "phone": self.phone,
            "email": self.email,
            "last_seen": self.last_seen.isoformat() if self.last_seen else None,
            "evidence": "; ".join(self.evidence),
        }
        return {key: value for key, value in output.items() if value is not None}


@dataclass(frozen=True)
class KnownProviders:
    candidates: list[Candidate]
    source_counts: dict[str, int]
    truncated: bool = False


def find_known_providers(
    *, household: Household, category: ProviderCategory, now: datetime | None = None
) -> KnownProviders:
    """Return the household's most trusted providers of a category, best first.

    At most MAX_CANDIDATES; `truncated` says more were found. Run four
    SELECTs (contacts, matching Paperless documents, Paperless
    correspondents, past events) and write nothing.
    """
    now = now or timezone.now()
    found = [
        *_contact_candidates(household, category),
        *_paperless_candidates(household, category),
        *_calendar_candidates(household, category, now),
    ]
    counts = Counter(candidate.source for candidate in found)
    candidates = [_merge(group) for group in _group_by_provider(found, category)]
    candidates.sort(key=_trust_order)
    return KnownProviders(
        candidates=candidates[:MAX_CANDIDATES],
        source_counts={
            "contacts": counts["contact"],
            "paperless": counts["paperless"],
            "calendar": counts["calendar"],
        },
        truncated=len(candidates) > MAX_CANDIDATES,
    )


def _any_contains(field_name: str, stems: Iterable[str]) -> Q:
    return reduce(or_, (Q(**{f"{field_name}__contains": stem}) for stem in stems))


def _contact_candidates(
    household: Household, category: ProviderCategory
) -> list[Candidate]:
    channels = ContactChannel.objects.filter(contact=OuterRef("pk")).order_by("pk")
    rows = (
        Contact.objects.filter(
            household=household,
            status__in=[ContactStatus.ACTIVE, ContactStatus.PENDING],
        )
        .filter(
            _any_contains("search_text", category.search_stems)
            | Q(tags__overlap=list(category.tag_spellings))
        )
        .annotate(
            phone_list=channels_array(ChannelKind.PHONE),
            email=Subquery(channels.filter(kind=ChannelKind.EMAIL).values("value")[:1]),
            address_list=addresses_array(),
        )
        .values(
            "id",
            "display_name",
            "kind",
            "relation",
            "tags",
            "last_contacted_at",
            "phone_list",
            "email",
            "address_list",
        )
    )
    tag_spellings = {fold_name(tag) for tag in category.tag_spellings}
    candidates = []
    for row in rows:
        evidence = []
        if row["relation"] and category.is_revealed_by(row["relation"]):
            evidence.append(f"relation: {row['relation']}")
        evidence += [
            f"tag: {tag}" for tag in row["tags"] if fold_name(tag) in tag_spellings
        ]
        if row["kind"] == ContactKind.BUSINESS and category.is_revealed_by(
            row["display_name"]
        ):
            evidence.append(f"name: {row['display_name']}")
        if not evidence:
            continue
        best_address = best_postal_address(row["address_list"], ("line1", "city"))
        phones = [channel["value"] for channel in row["phone_list"]]
        contacted = row["last_contacted_at"]
        candidates.append(
            Candidate(
                source="contact",
                contact_id=row["id"],
                name=row["display_name"],
                evidence=evidence,
                address=_postal_address(best_address) if best_address else None,
                phone=phones[0] if phones else None,
                email=row["email"],
                last_seen=timezone.localdate(contacted) if contacted else None,
                phones=frozenset(phones),
                places=tuple(
                    _place_key(a["line1"]) for a in row["address_list"] if a["line1"]
                ),
            )
        )
    return candidates


def _postal_address(address: Mapping[str, str]) -> str | None:
    line = one_line_address(address["line1"], address["postcode"], address["city"])
    return line or None


def _paperless_candidates(
    household: Household, category: ProviderCategory
) -> list[Candidate]:
    documents_by_correspondent: dict[int, list[tuple[str, date | None]]] = {}
    for document in (
        PaperlessDocument.objects.filter(
            household=household, correspondent__isnull=False
        )
        .filter(_any_contains("folded_title", category.search_stems))
        .values("correspondent_id", "title", "created")
    ):
        if category.is_revealed_by(document["title"]):
            documents_by_correspondent.setdefault(
                document["correspondent_id"], []
            ).append((document["title"], document["created"]))

    newest = PaperlessDocument.objects.filter(correspondent=OuterRef("pk")).order_by(
        F("created").desc(nulls_last=True), "-pk"
    )
    correspondents = (
        PaperlessCorrespondent.objects.filter(household=household)
        .filter(
            _any_contains("folded_name", category.search_stems)
            | Q(pk__in=list(documents_by_correspondent))
        )
        .annotate(
            document_count=Count("documents"),
            latest_created=Max("documents__created"),
            latest_title=Subquery(newest.values("title")[:1]),
        )
        .values("id", "name", "document_count", "latest_created", "latest_title")
    )
    candidates = []
    for row in correspondents:
        if category.is_revealed_by(row["name"]):
            count, title, created = (
                row["document_count"],
                row["latest_title"],
                row["latest_created"],
            )
        elif row["id"] in documents_by_correspondent:
            documents = documents_by_correspondent[row["id"]]
            title, created = max(documents, key=lambda d: d[1] or date.min)
            count = len(documents)
        else:
            continue
        candidates.append(
            Candidate(
                source="paperless",
                name=row["name"],
                evidence=[_documents_evidence(count, title, created)],
                last_seen=created,
            )
        )
    return candidates


def _documents_evidence(count: int, title: str | None, created: date | None) -> str:
    if not count:
        return "correspondent in Paperless, no documents"
    on = f" on {created.isoformat()}" if created else ""
    if count == 1:
        return f"1 document: '{title}'{on}"
    return f"{count} documents, latest '{title}'{on}"


def _calendar_candidates(
    household: Household, category: ProviderCategory, now: datetime
) -> list[Candidate]:
    events_by_place: dict[str, list[dict[str, Any]]] = {}
    for event in (
        CalendarEvent.objects.filter(household=household, starts_at__lt=now)
        .exclude(location="")
        .filter(_any_contains("folded_title", category.search_stems))
        .order_by("-starts_at", "-pk")
        .values("title", "starts_at", "location")
    ):
        if category.is_revealed_by(event["title"]):
            events_by_place.setdefault(fold_name(event["location"]), []).append(event)

    candidates = []
    for events in events_by_place.values():
        latest = events[0]
        location = latest["location"].strip()
        name, address = _name_and_address(location, fallback=latest["title"])
        seen = timezone.localdate(latest["starts_at"])
        count = "1 past event" if len(events) == 1 else f"{len(events)} past events"
        candidates.append(
            Candidate(
                source="calendar",
                name=name,
                address=address,
                evidence=[
                    f"{count} at {location}, latest '{latest['title']}' "
                    f"on {seen.isoformat()}"
                ],
                last_seen=seen,
                places=(_place_key(location),),
            )
        )
    return candidates


def _name_and_address(location: str, *, fallback: str) -> tuple[str, str]:
    """Split "Praxis Dr. Schmidt, Hauptstr. 1, Berlin" into a name and an address.

    A first part without digits names the place; otherwise the location is
    only an address and the event's title names the provider.
    """
    first, _, rest = (part.strip() for part in location.partition(","))
    if rest and not any(char.isdigit() for char in first):
        return first, rest
    return fallback, location


def _place_key(address: str) -> str:
    """Return an address folded for comparison: "Hauptstr. 1" = "Hauptstraße 1"."""
    return " ".join(
        fold_words(_STREET_ABBREVIATION.sub("strasse ", fold_name(address)))
    )


def _place_within(short: str, long: str) -> bool:
    """Return whether a street address (with its number) appears in another."""
    if not (re.search(r"\d", short) and re.search(r"[^\W\d_]", short)):
        return False
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is not None


def _name_core(name: str, category: ProviderCategory) -> frozenset[str]:
    """Return the words that tell one provider from another of the category."""
    return frozenset(
        word
        for word in fold_words(name)
        if word not in _GENERIC_NAME_WORDS and not category.is_revealed_by(word)
    )


def _same_provider(
    a: Candidate, b: Candidate, cores: Mapping[int, frozenset[str]]
) -> bool:
    if a.folded_name == b.folded_name or a.phones & b.phones:
        return True
    same_place = any(
        _place_within(x, y) or _place_within(y, x) for x in a.places for y in b.places
    )
    core = cores[id(a)]
    # "Zahnarzt Berlin" and "Zahnklinik Berlin" share a core but not a street.
    if core and core == cores[id(b)] and (same_place or not (a.places and b.places)):
        return True
    # Two address-book entries at one address may be two practices in one
    # building; an address links only a contact to what another source saw.
    return same_place and not a.source == b.source == "contact"


def _word_runs(place: str) -> set[str]:
    """Return every run of consecutive words of a folded place."""
    words = place.split()
    return {
        " ".join(words[start:end])
        for start in range(len(words))
        for end in range(start + 1, len(words) + 1)
    }


def _match_keys(
    candidate: Candidate, core: frozenset[str]
) -> tuple[set[tuple[str, Any]], set[tuple[str, Any]]]:
    """Return the keys a candidate is found by, and the keys it looks for.

    _same_provider needs an equal name, a shared phone, an equal name core, or
    one place inside another: a whole street address (the shorter side) equal
    to a run of the other's words.
    """
    shared: set[tuple[str, Any]] = {("name", candidate.folded_name)}
    shared |= {("phone", phone) for phone in candidate.phones}
    if core:
        shared.add(("core", core))
    whole = {("whole", place) for place in candidate.places}
    runs = {("run", run) for place in candidate.places for run in _word_runs(place)}
    found_by = shared | whole | runs
    looks_for = shared | {("run", place) for _, place in whole}
    looks_for |= {("whole", run) for _, run in runs}
    return found_by, looks_for


def _group_by_provider(
    found: list[Candidate], category: ProviderCategory
) -> list[list[Candidate]]:
    """Group what the sources found per provider, each group led by its most trusted.

    A candidate joins the first group it matches, so one event at a shared
    address cannot chain two different providers together. Groups are found
    through the keys a match needs, so the work grows with the candidates,
    not with their square.
    """
    cores = {id(candidate): _name_core(candidate.name, category) for candidate in found}
    groups: list[list[Candidate]] = []
    groups_by_key: dict[tuple[str, Any], set[int]] = {}
    for candidate in sorted(found, key=_trust_order):
        found_by, looks_for = _match_keys(candidate, cores[id(candidate)])
        near = sorted(set().union(*(groups_by_key.get(key, ()) for key in looks_for)))
        index = next(
            (
                number
                for number in near
                if any(
                    _same_provider(candidate, member, cores)
                    for member in groups[number]
                )
            ),
            None,
        )
        if index is None:
            index = len(groups)
            groups.append([])
        groups[index].append(candidate)
        for key in found_by:
            groups_by_key.setdefault(key, set()).add(index)
    return groups


def _merge(group: list[Candidate]) -> Candidate:
    """Return one candidate with the leader's identity and everyone's evidence."""
    leader, *others = group
    if not others:
        return leader
    evidence = list(leader.evidence)
    for other in others:
        evidence += _evidence_beside(other, leader)
    seen = [member.last_seen for member in group if member.last_seen]
    return Candidate(
        source=leader.source,
        contact_id=leader.contact_id,
        name=leader.name,
        evidence=evidence,
        address=next((m.address for m in group if m.address), None),
        phone=next((m.phone for m in group if m.phone), None),
        email=next((m.email for m in group if m.email), None),
        last_seen=max(seen) if seen else None,
    )


def _evidence_beside(other: Candidate, leader: Candidate) -> list[str]:
    """Return another source's evidence, saying under which name it was found."""
    if other.source == "calendar" or other.folded_name == leader.folded_name:
        return other.evidence
    if other.source == "contact":
        reasons = [part for part in other.evidence if part != f"name: {other.name}"]
        return [
            f"contact {other.name}" + (f" ({'; '.join(reasons)})" if reasons else "")
        ]
    return [f"{other.name}: {part}" for part in other.evidence]


def _trust_order(candidate: Candidate) -> tuple[int, int, str]:
    """Order by source trust, then newest last_seen (none last), then name."""
    seen = -candidate.last_seen.toordinal() if candidate.last_seen else 0
    return SOURCES.index(candidate.source), seen, candidate.folded_name
