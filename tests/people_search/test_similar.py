"""The whole-name scoring of similar names, without a database."""

import pytest

from people_search.engine.similar import (
    SCORE_FLOOR,
    SimilarName,
    name_score,
    pick_similar,
    query_words,
    sound_key,
    word_similarity,
)

THOMAS_MULLER = ["thomas", "muller"]


def pick(query, names, *, typed=None, weights=None):
    """Score rows named {id: words} against a query of folded words."""
    return pick_similar(
        query=query,
        typed=set(typed if typed is not None else query),
        names={("lead", pk): words for pk, words in names.items()},
        weights=weights or {},
    )


def ids(found):
    return [candidate.subject_id for candidate in found]


def test_words_align_in_any_order():
    assert name_score(query=["muler", "tomas"], name=THOMAS_MULLER) == name_score(
        query=["tomas", "muler"], name=THOMAS_MULLER
    )
    assert name_score(query=["muller", "thomas"], name=THOMAS_MULLER) == 1.0


def test_a_one_letter_typo_in_each_word_still_scores_high():
    assert word_similarity("muler", "muller") >= 0.8
    assert name_score(query=["tomas", "muler"], name=THOMAS_MULLER) >= 0.8


def test_a_missing_word_costs_but_does_not_exclude():
    whole = name_score(query=["tomas", "muler"], name=THOMAS_MULLER)
    partial = name_score(query=["muler"], name=THOMAS_MULLER)

    assert SCORE_FLOOR < partial < whole
    assert name_score(query=["muller"], name=["muller"]) == 1.0
    assert name_score(query=["muller"], name=THOMAS_MULLER) < 1.0


def test_an_extra_query_word_costs_but_does_not_exclude():
    """A middle name the row lacks, or a first name that is not the row's."""
    score = name_score(query=["anna", "maria", "schmidt"], name=["anna", "schmidt"])

    assert SCORE_FLOOR < score < 1.0


def test_an_unrelated_name_scores_below_the_floor():
    assert name_score(query=["gustav", "pfeiffer"], name=["anna", "meier"]) == 0.0
    assert name_score(query=["peter", "muller"], name=THOMAS_MULLER) < 0.6


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("meier", "mayer"),
        ("schmitt", "schmidt"),
        ("philipp", "filip"),
        ("jitzchak", "yitzhak"),
        ("kohen", "cohen"),
    ],
)
def test_names_that_sound_alike_are_alike(typed, stored):
    assert word_similarity(typed, stored) >= 0.75


def test_sound_key_respells_as_spoken():
    assert sound_key("meier") == sound_key("mayer") == sound_key("maier")
    assert sound_key("schmidt") == sound_key("schmitt")


def test_letters_ocr_merges_are_read_as_one():
    assert word_similarity("rnuller", "muller") >= 0.9
    assert word_similarity("clana", "dana") >= 0.9


def test_an_initial_matches_the_words_it_starts():
    assert word_similarity("m", "muller") > 0
    assert word_similarity("b", "muller") == 0
    assert name_score(query=["thomas", "m"], name=THOMAS_MULLER) > name_score(
        query=["thomas", "m"], name=["thomas", "becker"]
    )


def test_query_words_read_digits_as_letters_and_keep_initials():
    assert query_words("Mu1ler, Th0mas") == ["muller", "thomas"]
    assert query_words("Thomas M.") == ["thomas", "m"]
    assert query_words("Thomas 4711") == ["thomas"]


def test_rows_close_to_the_best_are_returned_best_first():
    found = pick(
        ["tomas", "muler"],
        {
            1: ["thomas", "becker"],
            2: ["thomas", "muller"],
            3: ["tomas", "moller"],
            4: ["anna", "meier"],
        },
    )

    assert ids(found) == [2, 3]
    assert found[0] == SimilarName("lead", 2, found[0].similarity)
    assert found[0].similarity > found[1].similarity


def test_rows_far_below_the_best_are_cut():
    found = pick(["tomas", "muler"], {1: ["thomas", "muller"], 2: ["anna", "muller"]})

    assert ids(found) == [1]


def test_at_most_the_limit_is_returned():
    names = {pk: [f"anna{'x' * pk}", "muller"] for pk in range(12)}

    assert len(pick(["muler"], names)) == 8


def test_a_weak_match_shared_by_several_rows_is_a_crowd():
    """A first name others share, with a surname nobody has, finds no one."""
    names = {1: ["gustav", "becker"], 2: ["gustav", "meier"]}

    assert pick(["gustav", "pfeiffer"], names) == []
    assert ids(pick(["gustav", "beker"], names)) == [1]


def test_a_rare_word_outweighs_a_common_one():
    """A different first name still finds the only person with a surname."""
    names = {1: ["roger", "zwickenbauer"], 2: ["peter", "meier"]}
    weights = {"peter": 0.4, "zwickenbauer": 1.0}

    assert ids(pick(["peter", "zwickenbauer"], names, weights=weights)) == [1]
    # Weighed alike, the first name's row ties with the surname's: a crowd.
    assert pick(["peter", "zwickenbauer"], names) == []


def test_literal_matches_are_left_to_text_search():
    names = {1: ["anna", "meier"], 2: ["peter", "mayer"]}

    assert ids(pick(["meier"], names)) == [2]
    # Typed with a digit, the name is no literal match: only this lane finds it.
    assert ids(pick(["meier"], names, typed=["me1er"])) == [1, 2]
