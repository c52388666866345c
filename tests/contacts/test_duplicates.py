"""Duplicate proposals: which contacts are likely one person, how sure, and why."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from contacts.duplicates import (
    CANDIDATES_PER_PROPOSAL,
    CROWDED_ADDRESS,
    Clue,
    names_alike,
    propose_duplicates,
)
from contacts.services import create_contacts
from people_search.engine.text import name_words
from tests.builders import build_contact

pytestmark = pytest.mark.django_db


def phone(value):
    return {"kind": "phone", "value": value}


def email(value):
    return {"kind": "email", "value": value}


def home(line1, postcode="10115", city="Berlin"):
    return {"kind": "home", "line1": line1, "postcode": postcode, "city": city}


def work(line1, postcode="80331", city="München"):
    return {"kind": "work", "line1": line1, "postcode": postcode, "city": city}


def pairs(household):
    return [
        {p.first.display_name, p.second.display_name}
        for p in propose_duplicates(household=household)
    ]


def proposal_of(household, first, second):
    for proposal in propose_duplicates(household=household):
        if {proposal.first.pk, proposal.second.pk} == {first.pk, second.pk}:
            return proposal
    return None


def clues(proposal):
    return [evidence.clue for evidence in proposal.evidence]


def test_a_shared_mobile_number_proposes_the_pair_whatever_the_names(household):
    mama = build_contact(household, "Mama", channels=[phone("0171 1234567")])
    gisela = build_contact(
        household, "Gisela Becker", channels=[phone("+49 171 1234567")]
    )

    proposal = proposal_of(household, mama, gisela)

    assert clues(proposal) == [Clue.PHONE]
    with translation.override("de"):
        assert str(proposal.evidence[0]) == (
            "Beide haben die Telefonnummer 0171 1234567"
        )
    with translation.override("en"):
        assert str(proposal.evidence[0]) == "Both have the phone number 0171 1234567"


def test_a_family_landline_is_no_evidence(household):
    for name in ("Anna Becker", "Ben Becker", "Clara Becker"):
        build_contact(household, name, channels=[phone("030 1234567")])
    build_contact(household, "Jonas Roth", channels=[phone("030 7654321")])
    build_contact(household, "Mia Roth", channels=[phone("030 7654321")])

    assert pairs(household) == []


def test_a_shared_email_proposes_the_pair(household):
    build_contact(household, "Ingrid", channels=[email("ingrid@example.org")])
    build_contact(household, "I. Schmidt", channels=[email("Ingrid@example.org")])

    assert pairs(household) == [{"Ingrid", "I. Schmidt"}]


def test_the_same_folded_name_proposes_the_pair(household):
    build_contact(household, "Jürgen Müller")
    build_contact(household, "Juergen Mueller")
    build_contact(household, "Jürgen Maier")

    proposals = propose_duplicates(household=household)

    assert [{p.first.display_name, p.second.display_name} for p in proposals] == [
        {"Jürgen Müller", "Juergen Mueller"}
    ]
    assert clues(proposals[0]) == [Clue.SAME_NAME]


def test_a_similar_name_needs_a_shared_place(household):
    build_contact(household, "Hans Becker", addresses=[home("Hauptstr. 5")])
    build_contact(household, "Hans Bekker", addresses=[home("Hauptstraße 9")])
    assert pairs(household) == [{"Hans Becker", "Hans Bekker"}]  # both in Berlin

    build_contact(household, "Sepp Huber", addresses=[work("Marienplatz 1")])
    build_contact(
        household, "Josef Huber", addresses=[work("Marienplatz 1", city="Muenchen")]
    )
    build_contact(household, "Thomas Schulz", addresses=[home("Ring 1", "", "Köln")])
    build_contact(household, "Tomas Schultz", addresses=[home("Weg 2", "", "Bonn")])

    assert {"Sepp Huber", "Josef Huber"} not in pairs(household)  # München ≠ Muenchen
    assert {"Thomas Schulz", "Tomas Schultz"} not in pairs(household)


def test_a_shared_workplace_and_a_nickname_make_a_proposal(household):
    sepp = build_contact(household, "Sepp Huber", addresses=[work("Marienplatz 1")])
    josef = build_contact(household, "Josef Huber", addresses=[work("Marienplatz  1")])

    proposal = proposal_of(household, sepp, josef)

    assert clues(proposal) == [Clue.SIMILAR_NAME, Clue.WORKPLACE]
    assert proposal.evidence[1].value == "Marienplatz 1, 80331 München"


def test_stronger_evidence_ranks_first_with_a_higher_score(household):
    build_contact(household, "Hans Becker", addresses=[home("Hauptstr. 5")])
    build_contact(household, "Hans Bekker", addresses=[home("Hauptstr. 5")])
    build_contact(household, "Eva Roth", channels=[phone("0171 5550000")])
    build_contact(household, "Eva Roth", channels=[phone("0171 5550000")])
    build_contact(household, "Udo Lang", addresses=[home("A 1", city="Kiel")])
    build_contact(household, "Udo Lange", addresses=[home("B 2", city="Kiel")])

    proposals = propose_duplicates(household=household)

    assert [p.first.display_name for p in proposals] == [
        "Eva Roth",
        "Hans Becker",
        "Udo Lang",
    ]
    scores = [p.score for p in proposals]
    assert scores == sorted(scores, reverse=True)
    assert 0 < scores[-1] < scores[0] < 1


def test_spam_and_other_households_are_left_out(household, other_household):
    build_contact(household, "Lena Graf")
    build_contact(household, "Lena Graf", status="spam")
    build_contact(other_household, "Lena Graf")

    assert pairs(household) == []


@pytest.mark.parametrize(
    ("first", "second", "alike"),
    [
        ("Sepp Huber", "Josef Huber", True),
        ("H. Becker", "Hans Becker", True),
        ("Hans Becker", "Hans Bekker", True),
        ("Yael Levi", "Yael Levy", True),
        ("Zohar Bar-Yael", "Zohar Bar-Avital", False),
        ("Gil Bar-Yael", "Zohar Bar-Yael", False),
        ("Anna Becker", "Ben Becker", False),
        ("Anna Becker", "Anna Roth", False),
        ("Becker", "Hans Becker", False),
    ],
)
def test_names_alike_by_typo_nickname_or_initial(first, second, alike):
    assert names_alike(name_words(first), name_words(second)) is alike


def surest_household(household):
    """Two strong pairs (same name, a shared phone), two weak ones (a city)."""
    build_contact(household, "Eva Roth", channels=[phone("0171 5550000")])
    build_contact(household, "Eva Roth", channels=[phone("0171 5550000")])
    build_contact(household, "Jürgen Müller", addresses=[home("Ring 1")])
    build_contact(household, "Juergen Mueller", addresses=[home("Weg 2")])
    build_contact(household, "Hans Becker", addresses=[home("Hauptstr. 5")])
    build_contact(household, "Hans Bekker", addresses=[home("Hauptstraße 9")])
    build_contact(household, "Udo Lang", addresses=[home("A 1", city="Kiel")])
    build_contact(household, "Udo Lange", addresses=[home("B 2", city="Kiel")])


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 10])
def test_the_surest_proposals_are_the_first_of_all(household, limit):
    surest_household(household)
    every = propose_duplicates(household=household)

    surest = propose_duplicates(household=household, limit=limit)

    assert len(every) == 4
    assert [(p.first, p.second, p.score) for p in surest] == [
        (p.first, p.second, p.score) for p in every[:limit]
    ]


def test_a_page_of_strong_proposals_reads_few_candidates_and_no_city_lane(
    household,
):
    """Similar names sharing only a city are the weakest and costliest lane."""
    surest_household(household)

    with CaptureQueriesContext(connection) as queries:
        surest = propose_duplicates(household=household, limit=2)

    [statement] = [
        q["sql"] for q in queries.captured_queries if "WITH book" in q["sql"]
    ]
    assert "common_words" not in statement
    assert f"LIMIT {2 * CANDIDATES_PER_PROPOSAL}\n" in statement
    assert [p.first.display_name for p in surest] == ["Eva Roth", "Jürgen Müller"]


def test_an_office_block_is_no_shared_address(household):
    """More contacts at one address than CROWDED_ADDRESS: it names nobody."""
    create_contacts(
        household=household,
        rows=[
            {"display_name": f"Kollegin {number}", "addresses": [work("Tower 1")]}
            for number in range(CROWDED_ADDRESS)
        ],
    )
    build_contact(household, "Hans Becker", addresses=[work("Tower 1")])
    build_contact(household, "Hans Bekker", addresses=[work("Tower 1")])

    proposal = next(
        p for p in propose_duplicates(household=household) if "Hans" in str(p.first)
    )

    assert clues(proposal) == [Clue.SIMILAR_NAME, Clue.CITY]
