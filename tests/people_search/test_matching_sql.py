"""The engine writes its match conditions as SQL itself: constants stay constants."""

import pytest
from django.db import connection
from django.db.models import F

from contacts.models import Contact
from contacts.selectors import CONTACT_COLUMNS, CONTACTS, contact_filters
from people_search.engine.matching import (
    RULES,
    Reason,
    Tier,
    evidence_of,
    holds,
    match_reason,
    trigram_served,
)
from people_search.engine.query import Query, Term, parse_query
from people_search.engine.similar import with_sounds
from people_search.engine.sql import sql
from people_search.engine.statements import first_matches
from people_search.index.querysets import find_matches
from tests.builders import build_contact

STATUSES = Contact._meta.get_field("status").choices


def matched_rows(household, query, similar_ids):
    """Return every contact the query matches, as find_person's statement reads
    them: with its `match_tier` and the evidence `match_reason` reads."""
    statement = first_matches(
        CONTACTS,
        household_id=household.pk,
        query=query,
        filters=contact_filters(
            household_id=household.pk, statuses=[status for status, _ in STATUSES]
        ),
        details=sql("c.id AS pk"),
        similar_ids=similar_ids,
        limit=100,
        scanning=False,
    )
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.params)
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def queryset_rows(household, query, similar_ids):
    """Return the same as the contact pages' queryset reads them."""
    return find_matches(
        Contact.objects.filter(household=household),
        query=query,
        columns=CONTACT_COLUMNS,
        similar_ids=similar_ids,
    ).values(
        "pk",
        "match_tier",
        match_document=F("match_text"),
        match_concepts=F("concepts"),
        match_phone=F("phone_digits"),
    )


@pytest.mark.parametrize(
    "word",
    [
        "o'brien",
        "o''; drop table x; --",
        "100%",
        "a_b",
        "{pk}",
        "back\\slash",
        'say "hi"',
        "a,b",
    ],
)
def test_any_word_is_matched_as_text(household, word):
    """Folded words are letters and digits, but nothing breaks the SQL if not."""
    contact = build_contact(household, "Placeholder")
    other = build_contact(household, "Someone Else")
    Contact.objects.filter(pk=contact.pk).update(
        search_text=word, match_text=f"| {word} |"
    )
    query = Query(text=word, terms=(Term(text=word, words=(word,)),), phone_digits=None)

    for read in (matched_rows, queryset_rows):
        rows = [
            (value["pk"], value["match_tier"], match_reason(query, value))
            for value in read(household, query, [other.pk])
        ]

        assert sorted(rows) == sorted(
            [
                (contact.pk, Tier.EXACT, Reason.NAME),
                (other.pk, Tier.SIMILAR, Reason.SIMILAR_NAME),
            ]
        )


ROWS = [
    ("Thomas Müller", {"relation": "Nachbar", "aliases": ["Tommi"]}),
    ("Gisela Huber", {"relation": "Großmutter", "aliases": ["Oma Gisela"]}),
    ("Josef Huber", {"relation": "Onkel von Anna", "aliases": []}),
    ("Anna Becker", {"relation": "Kollegin", "aliases": ["Mama"]}),
    ("Hannah Schmidt", {"relation": "", "aliases": ["Zahnärztin"]}),
    (
        "Klempner Meyer GmbH",
        {
            "kind": "business",
            "relation": "Installateur",
            "channels": [
                {"kind": "phone", "value": "+49 170 1234567"},
                {"kind": "email", "value": "anna.meyer@example.org"},
            ],
        },
    ),
    ("Catrin Vogel", {"relation": "", "aliases": []}),
    ("Stefan Wolf", {"title": "Dr. med.", "relation": "Hausarzt"}),
    ("Autohaus Brandt", {"kind": "business"}),
    ("Fielmann", {"tags": ["optician"]}),
    ("Tal", {"first_name": "Tal"}),
    ("Tal Avidan", {"first_name": "Tal", "last_name": "Avidan"}),
]
QUERIES = [
    "Thomas Müller",
    "Tom Müller",
    "Müller Thomas",
    "Oma",
    "grandma",
    "Oma Gisela",
    "Sepp Huber",
    "huber",
    "an",
    "Anna",
    "mama anna",
    "Klempner",
    "plumber anna",
    "example",
    "0170 1234567",
    "homas",
    "Nachbar Tommi",
    "Stephan",
    "Stephan Wo",
    "Dr. Wolf",
    "die Werkstatt",
    "der Optiker",
    "Tal",
    "Katrin",
    "Katrin Vo",
]


@pytest.mark.parametrize("text", QUERIES)
def test_the_sql_tier_is_the_first_rule_a_row_meets(household, text):
    """The tier's SQL, generated from the rules, and the rules `match_reason`
    reads agree."""
    contacts = [build_contact(household, name, **fields) for name, fields in ROWS]
    query = parse_query(text, region="DE")
    # The words of the household's names heard as the query's, as the name
    # index finds them.
    query = with_sounds(query, [("katrin", "catrin")]) or query
    rules = [rule for rule in RULES if rule.tier < Tier.INSIDE]

    for similar_ids in ([], [contacts[0].pk, contacts[2].pk]):
        values = matched_rows(household, query, similar_ids)
        for value in values:
            row = evidence_of(value)
            met = [rule.tier for rule in rules if holds(rule, query, row)]
            assert value["match_tier"] in (min(met, default=Tier.INSIDE), Tier.SIMILAR)
            if value["match_tier"] == Tier.SIMILAR:
                assert value["pk"] in similar_ids
            assert match_reason(query, value) is not None


@pytest.mark.parametrize(
    ("text", "served"),
    [
        ("Müller", True),
        ("meine Oma", True),
        ("Anna Müller-Lüdenscheidt", True),
        ("0171 555", True),
        ("mü", False),
        ("Anna M", False),
        ("Jo", False),
    ],
)
def test_the_trigram_indexes_serve_terms_of_three_letters_or_digits(text, served):
    assert trigram_served(parse_query(text, region="DE")) is served


def test_no_query_is_served_by_trigrams():
    assert not trigram_served(None)
    assert not trigram_served(parse_query("  ", region="DE"))
