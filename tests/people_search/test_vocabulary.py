"""The one vocabulary: relation words as concepts, in German and English."""

import pytest

from contacts.providers.categories import CATEGORIES
from people_search.engine.vocabulary import (
    VOCABULARY,
    concepts_named_by,
    concepts_titled,
)


@pytest.mark.parametrize(
    ("words", "concept"),
    [
        (
            ["Oma", "Omi", "Großmutter", "grandma", "grandmother", "granny"],
            "grandmother",
        ),
        (["Opa", "Großvater", "grandpa", "grandfather"], "grandfather"),
        (["Mama", "Mutti", "Mutter", "mom", "mum", "mother"], "mother"),
        (["Papa", "Vater", "dad", "father"], "father"),
        (["Schwiegermutter", "mother-in-law", "mother in law"], "mother_in_law"),
        (["Patentante", "Patin", "godmother"], "godmother"),
        (["Patenonkel", "godfather"], "godfather"),
        (["Nachbar", "Nachbarin", "Nachbarn", "neighbour", "neighbor"], "neighbour"),
        (["Chef", "Chefin", "boss"], "boss"),
        (["Kollege", "Kollegin", "Kollegen", "colleague", "co-worker"], "colleague"),
        (["Klempner", "Installateur", "plumber"], "plumber"),
        (["Steuerberater", "Steuerberaterin", "tax advisor"], "tax_advisor"),
        (["Zahnarzt", "Zahnärztin", "dentist"], "dentist"),
        (["Arzt", "Ärztin", "Hausärztin", "doctor"], "doctor"),
        (["Tante", "aunt", "auntie"], "aunt"),
        (["Cousin", "Cousine", "cousin"], "cousin"),
        (["Freund", "Freundin", "Schulfreundin", "friend", "girlfriend"], "friend"),
    ],
)
def test_every_word_of_a_concept_names_it_in_both_languages(words, concept):
    for word in words:
        assert concepts_named_by(word) == (concept,), word


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Großmutter", ("grandmother",)),
        ("Oma Gisela", ("grandmother",)),
        ("Kollegin (Anna)", ("colleague",)),
        ("ehemaliger Kollege (Jonas)", ("colleague",)),
        ("Nachbarin (2. OG)", ("neighbour",)),
        ("Mutter von Jakob (Lenas Klasse)", ("mother",)),
        ("Patentante von Lena", ("godmother",)),
        ("Schwägerin (Partnerin von Tobias)", ("sister_in_law", "partner")),
        ("Bezirksschornsteinfeger", ("chimney_sweep",)),
        ("mein Zahnarzt", ("dentist",)),
        ("Maya's friend's mother", ("mother", "friend")),
    ],
)
def test_a_relation_names_the_concepts_of_its_words(text, expected):
    assert set(concepts_named_by(text)) == set(expected)


@pytest.mark.parametrize(
    "text",
    [
        "Großtante",  # a great-aunt is no aunt
        "Urgroßmutter",  # nor a great-grandmother a grandmother
        "Omar",
        "Thomas",
        "Lenas Klasse",
        "Elektroinstallateur",  # an electrician, not a plumber
    ],
)
def test_compounds_and_look_alikes_keep_their_own_meaning(text):
    assert "aunt" not in concepts_named_by(text)
    assert "grandmother" not in concepts_named_by(text)
    assert "plumber" not in concepts_named_by(text)


def test_mother_in_law_is_no_mother_and_schwiegermutter_no_mutter():
    assert concepts_named_by("mother-in-law") == ("mother_in_law",)
    assert concepts_named_by("Schwiegermutter") == ("mother_in_law",)
    assert concepts_named_by("Großmutter") == ("grandmother",)


def test_provider_categories_are_the_vocabularys_trade_concepts():
    providers = [concept for concept in VOCABULARY if concept.provider]

    assert tuple(providers) == CATEGORIES
    assert concepts_named_by("Tierärztin (Bello)") == ("veterinary",)


def test_concept_ids_are_unique():
    ids = [concept.id for concept in VOCABULARY]

    assert len(ids) == len(set(ids))


def test_a_title_names_the_concepts_whose_people_carry_it():
    assert set(concepts_titled("dr")) == {"doctor", "dentist", "veterinary"}
    assert concepts_titled("prof") == ()
