"""Propose contacts of a household that are likely the same person, and say why.

One SQL statement finds the candidate pairs through indexed joins, never by
comparing every contact with every other: contacts that share a phone or email
(a value on more than two contacts is a shared line and identifies nobody),
contacts with the same folded name, and contacts whose names share a word or
who share an address, whose names pg_trgm finds alike and who share an address,
a workplace or a city. Python then weighs each pair's evidence with the
matching engine's words and nicknames and says it in words.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from django.db import connection
from django.utils.translation import gettext

from contacts.models import Contact, ContactStatus
from household.models import Household
from people_search.engine.nicknames import name_variants
from people_search.engine.phones import format_phone
from people_search.engine.text import name_words

# A name word on more contacts than this ("gmbh", a very common first name)
# pairs too many of them to be worth comparing by its word alone.
CROWDED_WORD = 100
# Contacts living or working at one address: more than this is an office block.
CROWDED_ADDRESS = 50
# pg_trgm similarity of two folded names to consider them alike; pairs below
# it may still be alike by nicknames, but only when they share a word.
SIMILAR_NAMES = 0.45
CANDIDATE_NAMES = 0.3


class Clue(StrEnum):
    """A kind of evidence that two contacts are the same."""

    PHONE = "phone"
    EMAIL = "email"
    SAME_NAME = "same_name"
    SIMILAR_NAME = "similar_name"
    ADDRESS = "address"
    WORKPLACE = "workplace"
    CITY = "city"


# How sure each clue alone makes a proposal; clues combine as independent
# chances (1 - product of 1 - weight).
WEIGHTS = {
    Clue.PHONE: 0.55,
    Clue.EMAIL: 0.6,
    Clue.SAME_NAME: 0.6,
    Clue.SIMILAR_NAME: 0.35,
    Clue.ADDRESS: 0.3,
    Clue.WORKPLACE: 0.25,
    Clue.CITY: 0.1,
}
PLACES = (Clue.ADDRESS, Clue.WORKPLACE, Clue.CITY)


@dataclass(frozen=True)
class Evidence:
    """One reason to think two contacts are the same, with what they share."""

    clue: Clue
    value: str = ""

    def __str__(self) -> str:
        """Return the evidence in words, in the active language."""
        texts = {
            Clue.PHONE: gettext("Both have the phone number %(value)s"),
            Clue.EMAIL: gettext("Both have the email address %(value)s"),
            Clue.SAME_NAME: gettext("The same name"),
            Clue.SIMILAR_NAME: gettext("Similar names"),
            Clue.ADDRESS: gettext("The same address: %(value)s"),
            Clue.WORKPLACE: gettext("The same workplace: %(value)s"),
            Clue.CITY: gettext("Both in %(value)s"),
        }
        return texts[self.clue] % {"value": self.value}


@dataclass(frozen=True)
class Proposal:
    """Two contacts that are likely one: how sure (0 to 1) and why."""

    first: Contact
    second: Contact
    score: float
    evidence: tuple[Evidence, ...]

    @property
    def percent(self) -> int:
        return round(self.score * 100)


# Candidate pairs (first < second) with what they share. Every join runs on
# one household's rows: channels through (household, kind, value), names
# through (household, sort_name), words and addresses hashed in memory.
_CANDIDATES = """
WITH book AS (
    SELECT id, sort_name FROM contacts_contact
    WHERE household_id = %(household)s AND status <> %(spam)s
),
lines AS (
    SELECT ch.kind, ch.value,
           array_agg(DISTINCT ch.contact_id ORDER BY ch.contact_id) AS ids
    FROM contacts_contactchannel ch JOIN book ON book.id = ch.contact_id
    WHERE ch.household_id = %(household)s AND ch.kind IN ('phone', 'email')
    GROUP BY ch.kind, ch.value
    HAVING count(DISTINCT ch.contact_id) = 2
),
channel_pairs AS (
    SELECT ids[1] AS first, ids[2] AS second,
           min(value) FILTER (WHERE kind = 'phone') AS phone,
           min(value) FILTER (WHERE kind = 'email') AS email
    FROM lines GROUP BY 1, 2
),
name_pairs AS (
    SELECT a.id AS first, b.id AS second
    FROM book a JOIN book b ON b.sort_name = a.sort_name AND a.id < b.id
    WHERE a.sort_name <> ''
),
words AS (
    SELECT DISTINCT book.id, word
    FROM book, regexp_split_to_table(book.sort_name, '[^[:alpha:]]+') AS word
    WHERE length(word) > 1
),
common_words AS (
    SELECT word FROM words GROUP BY word HAVING count(*) <= %(crowded_word)s
),
places AS (
    SELECT contact_id AS id, kind,
           lower(regexp_replace(trim(line1), '\\s+', ' ', 'g'))
             || '|' || lower(trim(postcode)) || '|' || lower(trim(city)) AS place,
           lower(trim(city)) AS city,
           concat_ws(', ', nullif(trim(line1), ''),
                     nullif(trim(trim(postcode) || ' ' || trim(city)), '')) AS shown,
           trim(city) AS city_shown
    FROM addresses JOIN book ON book.id = addresses.contact_id
    WHERE addresses.household_id = %(household)s
),
common_places AS (
    SELECT place FROM places WHERE place NOT LIKE '|%%'
    GROUP BY place HAVING count(DISTINCT id) <= %(crowded_address)s
),
near_pairs AS (
    SELECT x.id AS first, y.id AS second
    FROM words x JOIN common_words USING (word)
    JOIN words y ON y.word = x.word AND x.id < y.id
    UNION
    SELECT x.id, y.id
    FROM places x JOIN common_places USING (place)
    JOIN places y ON y.place = x.place AND x.id < y.id
),
similar_pairs AS (
    SELECT near_pairs.first, near_pairs.second
    FROM near_pairs
    JOIN book a ON a.id = near_pairs.first
    JOIN book b ON b.id = near_pairs.second
    WHERE a.sort_name <> b.sort_name
      AND similarity(a.sort_name, b.sort_name) >= %(candidate_names)s
),
pairs AS (
    SELECT first, second FROM channel_pairs
    UNION SELECT first, second FROM name_pairs
    UNION SELECT first, second FROM similar_pairs
)
SELECT pairs.first, pairs.second, cp.phone, cp.email,
       similarity(a.sort_name, b.sort_name) AS name_similarity,
       (SELECT min(x.shown) FROM places x JOIN places y
          ON y.place = x.place AND x.kind <> 'work' AND y.kind <> 'work'
        WHERE x.id = pairs.first AND y.id = pairs.second
          AND x.place NOT LIKE '|%%') AS address,
       (SELECT min(x.shown) FROM places x JOIN places y
          ON y.place = x.place AND x.kind = 'work' AND y.kind = 'work'
        WHERE x.id = pairs.first AND y.id = pairs.second
          AND x.place NOT LIKE '|%%') AS workplace,
       (SELECT min(x.city_shown) FROM places x JOIN places y ON y.city = x.city
        WHERE x.id = pairs.first AND y.id = pairs.second
          AND x.city <> '') AS city
FROM pairs
JOIN book a ON a.id = pairs.first
JOIN book b ON b.id = pairs.second
LEFT JOIN channel_pairs cp ON cp.first = pairs.first AND cp.second = pairs.second
WHERE NOT EXISTS (
    SELECT 1 FROM contacts_dismissedduplicate d
    WHERE d.first_id = pairs.first AND d.second_id = pairs.second
)
"""


def propose_duplicates(*, household: Household) -> list[Proposal]:
    """Return the household's likely duplicate contacts, surest first.

    Spam is left out, and so are pairs an admin dismissed.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            _CANDIDATES,
            {
                "household": household.pk,
                "spam": ContactStatus.SPAM,
                "crowded_word": CROWDED_WORD,
                "crowded_address": CROWDED_ADDRESS,
                "candidate_names": CANDIDATE_NAMES,
            },
        )
        rows = cursor.fetchall()
    contacts = Contact.objects.filter(household=household).in_bulk(
        {contact_id for row in rows for contact_id in row[:2]}
    )
    proposals = []
    for first, second, phone, email, similarity, address, workplace, city in rows:
        evidence = _evidence(
            contacts[first],
            contacts[second],
            region=household.default_region,
            phone=phone,
            email=email,
            similarity=similarity,
            places={Clue.ADDRESS: address, Clue.WORKPLACE: workplace, Clue.CITY: city},
        )
        if evidence:
            proposals.append(
                Proposal(
                    first=contacts[first],
                    second=contacts[second],
                    score=combined_score(clue.clue for clue in evidence),
                    evidence=tuple(evidence),
                )
            )
    proposals.sort(key=lambda p: (-p.score, p.first.sort_name, p.first.pk, p.second.pk))
    return proposals


def combined_score(clues: Iterable[Clue]) -> float:
    """Return how sure the clues make a proposal, as independent chances."""
    doubt = 1.0
    for clue in clues:
        doubt *= 1 - WEIGHTS[clue]
    return round(1 - doubt, 3)


def _evidence(
    first: Contact,
    second: Contact,
    *,
    region: str,
    phone: str | None,
    email: str | None,
    similarity: float,
    places: dict[Clue, str | None],
) -> list[Evidence]:
    """Return what speaks for the pair, or nothing when it is no proposal."""
    evidence: list[Evidence] = []
    same_name = first.sort_name == second.sort_name
    alike = same_name or names_alike(
        first.display_name, second.display_name, similarity=similarity
    )
    if phone and (alike or not relatives(first.display_name, second.display_name)):
        evidence.append(Evidence(Clue.PHONE, format_phone(phone, region)))
    if email:
        evidence.append(Evidence(Clue.EMAIL, email))
    if same_name:
        evidence.append(Evidence(Clue.SAME_NAME))
    elif alike:
        evidence.append(Evidence(Clue.SIMILAR_NAME))
    shared = [Evidence(clue, value) for clue, value in places.items() if value]
    if not evidence or (evidence == [Evidence(Clue.SIMILAR_NAME)] and not shared):
        return []
    # The city says little once the address itself is the same.
    if any(place.clue in (Clue.ADDRESS, Clue.WORKPLACE) for place in shared):
        shared = [place for place in shared if place.clue != Clue.CITY]
    return evidence + shared


def names_alike(first: str, second: str, *, similarity: float) -> bool:
    """Return whether two names likely name one person.

    Alike are names pg_trgm finds similar, and names of the same words where
    a given name may be a nickname of the other's ("Sepp Huber", "Josef
    Huber") or an initial ("H. Becker", "Hans Becker").
    """
    if similarity >= SIMILAR_NAMES:
        return True
    words, others = name_words(first), name_words(second)
    if not words or not others or words[-1] != others[-1]:
        return False
    given, other_given = words[:-1], others[:-1]
    if not given or not other_given:
        return False
    a, b = given[0], other_given[0]
    return (
        a == b
        or b in name_variants(a)
        or (len(a) == 1 and b.startswith(a))
        or (len(b) == 1 and a.startswith(b))
    )


def relatives(first: str, second: str) -> bool:
    """Return whether two names are of one family: one surname, two given names.

    Such contacts sharing a phone number share a line, not an identity.
    """
    words, others = name_words(first), name_words(second)
    return (
        len(words) > 1
        and len(others) > 1
        and words[-1] == others[-1]
        and not names_alike(first, second, similarity=0.0)
    )
