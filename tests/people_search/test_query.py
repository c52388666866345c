"""What a typed query asks for: stop words dropped, concepts and nicknames attached."""

import pytest

from people_search.engine.query import parse_query


def terms(text, region="DE"):
    return [term.text for term in parse_query(text, region=region).terms]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("mein Steuerberater", ["steurberater"]),
        ("der Klempner", ["klempner"]),
        ("die Oma", ["oma"]),
        ("unsere Nachbarin", ["nachbarin"]),
        ("Frau Dr. Schmidt", ["schmidt"]),
        ("Herrn Prof. Dr. Weber", ["weber"]),
        ("Dipl.-Ing. Krause", ["krause"]),
        ("Dr. med. dent. Lange", ["lange"]),
        ("my grandma", ["grandma"]),
        ("the plumber", ["plumber"]),
        ("Mrs Cohen", ["cohen"]),
        ("Mr. Levi", ["levi"]),
        ("a friend", ["friend"]),
    ],
)
def test_articles_possessives_honorifics_and_titles_are_dropped(typed, expected):
    assert terms(typed) == expected


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Frau", ["frau"]),
        ("der", ["der"]),
        ("Dr.", ["dr."]),
        ("meine Frau", ["frau"]),
        ("Frau Dr.", ["frau", "dr."]),
    ],
)
def test_they_stay_when_they_are_all_there_is(typed, expected):
    assert terms(typed) == expected


def test_a_doctorate_field_alone_is_a_word_like_any_other():
    assert terms("med") == ["med"]
    assert terms("Dr. med. Mueller") == ["muller"]


def test_the_whole_query_with_its_dropped_words_can_still_be_an_alias():
    query = parse_query("Frau Peters", region="DE")

    assert query.exact_phrases == ("peters", "frau peters")


@pytest.mark.parametrize(
    ("typed", "concepts"),
    [
        ("Omi", ("grandmother",)),
        ("grandma", ("grandmother",)),
        ("Nachbarn", ("neighbour",)),
        ("Ärztin", ("doctor",)),
        ("Kollegin", ("colleague",)),
        ("Kollegen", ("colleague",)),
        ("Schmidt", ()),
    ],
)
def test_a_term_carries_the_concepts_it_names(typed, concepts):
    (term,) = parse_query(typed, region="DE").terms

    assert term.concepts == concepts


def test_words_that_name_a_concept_only_together_become_one_term():
    tax = parse_query("my tax advisor", region="GB").terms
    in_law = parse_query("the mother in law", region="GB").terms

    assert [(t.text, t.concepts) for t in tax] == [("tax advisor", ("tax_advisor",))]
    assert [(t.text, t.concepts) for t in in_law] == [
        ("mother in law", ("mother_in_law",))
    ]


def test_a_name_term_carries_its_nicknames():
    sepp, huber = parse_query("Sepp Huber", region="DE").terms

    assert sepp.nicknames == ("josef",)
    assert huber.nicknames == ()


def test_phone_digits_and_punctuation_only_terms():
    query = parse_query("030 123-45 & ", region="DE")

    assert [term.text for term in query.terms] == ["030", "123-45"]
    assert query.phone_digits is None
    assert parse_query("030 1234567", region="DE").phone_digits == "301234567"


@pytest.mark.parametrize(
    ("typed", "titles"),
    [
        ("Dr. Kaya", ("dr",)),
        ("Frau Prof. Dr. Weber", ("prof", "dr")),
        ("Dr. med. dent. Lange", ("dr",)),
        ("Frau Weber", ()),
        ("Dr.", ()),  # a title alone is what is looked for, no evidence
    ],
)
def test_titles_are_dropped_as_terms_but_kept_as_evidence(typed, titles):
    assert parse_query(typed, region="DE").titles == titles


def test_a_term_s_spellings_are_its_variants_heard_the_same():
    (term,) = parse_query("Stephan", region="DE").terms

    assert "stefan" in term.spellings
    assert set(term.spellings) <= set(term.nicknames)
    assert "steve" not in term.spellings
