"""The whole-name scoring of similar names, without a database."""

import itertools
import re

import pytest

from people_search.engine.query import parse_query
from people_search.engine.similar import (
    _ONE_WORD_SQL,
    SCORE_FLOOR,
    SimilarName,
    _best_pairing,
    _near_sql,
    _rows_sql,
    name_score,
    pick_similar,
    query_words,
    reached_names,
    reads_every_row,
    sound_key,
    surname_words,
    with_sounds,
    word_scores,
    word_similarity,
)

THOMAS_MULLER = ["thomas", "muller"]


def pick(query, names, *, typed=None, crowds=None, surname=()):
    """Score rows named {id: words} against a query of folded words.

    `crowds` counts the rows close to each query word; one each when not given.
    """
    return pick_similar(
        query=query,
        typed=set(typed if typed is not None else query),
        names={("lead", pk): words for pk, words in names.items()},
        crowds=crowds or dict.fromkeys(query, 1),
        surname=surname,
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


def every_pairing(similarities, width):
    """Return the best (total, paired) by trying every assignment."""
    best = (0.0, 0)
    choices = [[None, *range(width)]] * len(similarities)
    for columns in itertools.product(*choices):
        used = [c for c in columns if c is not None]
        values = [
            similarities[row][c] for row, c in enumerate(columns) if c is not None
        ]
        if len(set(used)) == len(used) and all(values):
            best = max(best, (sum(values, 0.0), len(used)))
    return best


@pytest.mark.parametrize(
    "similarities",
    [
        [[0.0, 0.0]],
        [[0.6, 1.0, 0.0]],
        [[1.0, 0.9], [0.9, 0.0]],
        [[0.7, 0.7], [0.7, 0.7]],
        [[0.0, 0.8, 0.3], [0.0, 0.8, 0.0]],
        [[0.5], [0.9]],
        [[0.2, 0.9, 0.4], [0.9, 0.1, 0.0], [0.3, 0.3, 0.8]],
    ],
)
def test_pairing_tries_every_assignment(similarities):
    width = len(similarities[0])
    assert _best_pairing(similarities, width) == every_pairing(similarities, width)


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
    crowds = {"peter": 500, "zwickenbauer": 1}

    assert ids(pick(["peter", "zwickenbauer"], names, crowds=crowds)) == [1]
    # Weighed alike, the first name's row ties with the surname's: a crowd.
    assert pick(["peter", "zwickenbauer"], names) == []


def test_literal_matches_are_left_to_text_search():
    names = {1: ["anna", "meier"], 2: ["peter", "mayer"]}

    assert ids(pick(["meier"], names)) == [2]
    # Typed with a digit, the name is no literal match: only this lane finds it.
    assert ids(pick(["meier"], names, typed=["me1er"])) == [1, 2]


LINDENLECHNERS = {
    1: ["erik", "lindenlechner"],
    2: ["anna", "lindenlechner"],
    3: ["peter", "meier"],
    4: ["peter", "schulz"],
}


@pytest.mark.parametrize("typed", ["lindenlechner", "lindenlechnr"])
def test_a_replaced_first_name_finds_the_few_rows_with_the_surname(typed):
    """No row has both words: the rows sharing a rare surname are the answer,
    not those sharing the first name."""
    query = ["peter", typed]

    assert pick(query, LINDENLECHNERS) == []
    # Anna before Erik: rows of one score come by name.
    assert ids(pick(query, LINDENLECHNERS, surname=[typed])) == [2, 1]


def test_a_surname_many_rows_share_points_at_no_one():
    names = {pk: [first, "lindenlechner"] for pk, first in enumerate("abcd")}
    query = ["peter", "lindenlechner"]

    assert pick(query, names, surname=["lindenlechner"]) == []
    # Fetched or not, the rows the query found close to the surname count.
    crowds = {"peter": 1, "lindenlechner": 12}
    assert pick(query, LINDENLECHNERS, crowds=crowds, surname=["lindenlechner"]) == []


def test_a_first_name_points_at_no_one():
    names = {1: ["hans", "becker"], 2: ["hans", "meier"]}

    assert pick(["hans", "schmidt"], names, surname=["schmidt"]) == []


def test_a_short_surname_one_letter_off_points_at_no_one():
    """Kahn is another name than Kuhn, not a typo of it."""
    names = {1: ["erik", "kuhn"], 2: ["jonas", "kuhn"]}

    assert ids(pick(["peter", "kuhn"], names, surname=["kuhn"])) == [1, 2]
    assert pick(["peter", "kahn"], names, surname=["kahn"]) == []


def test_surname_rows_come_after_the_close_ones():
    names = {1: ["renate", "schneider"], 2: ["doris", "schroder"]}
    query = ["renate", "schroder"]

    found = pick(query, names, surname=["schroder"])

    assert ids(found) == [1, 2]
    assert found[0].similarity > found[1].similarity


def test_a_surname_the_best_row_shares_adds_no_one():
    names = {1: ["thomas", "muller"], 2: ["anna", "muller"], 3: ["thomas", "becker"]}

    assert ids(pick(["tomas", "muler"], names, surname=["muler"])) == [1]


def test_a_surname_a_literal_match_shares_adds_no_one():
    names = {**LINDENLECHNERS, 5: ["jonas", "lindenlechner"]}

    assert ids(pick(["peter", "lindenlechner"], names, surname=["lindenlechner"])) == [
        2,
        1,
        5,
    ]
    assert pick(["anna", "lindenlechner"], names, surname=["lindenlechner"]) == []


def test_a_surname_of_two_words_needs_both():
    names = {1: ["hans", "muller", "ludenscheidt"], 2: ["petra", "muller"]}
    crowds = {"anna": 1, "muller": 200, "ludenscheidt": 1}
    query = ["anna", "muller", "ludenscheidt"]

    found = pick(query, names, crowds=crowds, surname=query[1:])

    assert ids(found) == [1]


@pytest.mark.parametrize(
    ("typed", "surname"),
    [
        ("Thomas Müller", ["muller"]),
        ("Yael Ben-David", ["ben", "david"]),
        ("van der Berg, Anna", ["van", "der", "berg"]),
        ("Tomas M.", ["m"]),
        ("", []),
    ],
)
def test_the_surname_is_the_last_part_or_what_comes_before_a_comma(typed, surname):
    assert surname_words(typed) == surname


def test_near_words_are_scored_against_each_query_word_they_are_like():
    scores = word_scores(
        ["thomas", "muller"], [(1, "thomas"), (2, "mueller"), (3, "tomas")]
    )

    assert list(zip(scores.ids, scores.positions, scores.exact, strict=True)) == [
        (1, 1, True),
        (2, 2, False),
        (3, 1, False),
    ]
    assert scores.similarities[0] == 1.0
    assert scores.similarities[1] == word_similarity("muller", "mueller")


def test_a_near_word_unlike_every_query_word_reaches_no_row():
    """Embedding and trigrams found it; the score would give it nothing."""
    scores = word_scores(["stephens"], [(1, "stevens"), (2, "stahl")])

    assert scores.ids == [1]


def test_rows_reached_are_named_and_counted_in_the_crowds_of_words_close_to_them():
    """As the rows statement has them: a row whose near words are all unlike
    the query's reaches nothing; a row counts in a word's crowd when one of
    its near words is as alike as a shared surname's (Meyer, not Meixner).
    Only the near words count: Ben Meier is in no crowd of "ben"."""
    rows = [
        ("lead", 1, ["meyer"], ["anna", "meyer"]),
        ("lead", 2, ["meier", "mayer"], ["ben", "meier", "mayer"]),
        ("member", 3, ["meixner"], ["carl", "meixner"]),
        ("lead", 4, ["stahl"], ["dora", "stahl"]),
    ]

    names, crowds = reached_names(["meier", "ben"], rows)

    assert names == {
        ("lead", 1): ["anna", "meyer"],
        ("lead", 2): ["ben", "meier", "mayer"],
        ("member", 3): ["carl", "meixner"],
    }
    assert crowds == {"meier": 2, "ben": 0}


def test_no_row_reached_gives_no_crowds():
    assert reached_names(["meier"], [("lead", 4, ["stahl"], ["stahl"])]) == ({}, {})


@pytest.mark.parametrize("words", range(1, 6))
def test_every_statement_of_the_lane_is_written_out_whole(words):
    """No marker of the texts the statements are built from is left in them."""
    statements = [
        _near_sql(words, exact=exact, reached=reached)
        for exact in (True, False)
        for reached in (True, False)
    ]
    statements += [_rows_sql(words), _ONE_WORD_SQL]

    for statement in statements:
        assert re.findall(r"\{\w+\}", statement) == []


@pytest.mark.parametrize(
    ("rows", "read_with_the_near_words"),
    [(None, False), (0, True), (100, True), (101, False)],
)
def test_rows_are_read_with_the_near_words_when_no_more_than_are_ranked(
    rows, read_with_the_near_words
):
    assert reads_every_row(rows) is read_with_the_near_words


def test_words_heard_as_a_term_but_spelled_otherwise_join_the_term():
    query = parse_query("Katrin Vogel", region="DE")

    heard = with_sounds(
        query,
        [("katrin", "catrin"), ("katrin", "katrina"), ("katrin", "karin")],
    )

    assert [term.sounds for term in heard.terms] == [("catrin",), ()]


def test_no_word_heard_as_a_term_leaves_the_query_as_it_is():
    query = parse_query("Tomas", region="DE")

    # Thomas is a nickname of Tomas: text search finds it as one.
    assert with_sounds(query, [("tomas", "thomas"), ("tomas", "tomasz")]) is None


def test_rows_of_one_score_come_by_name_whatever_their_ids():
    """Ids follow the order rows were written in; an answer must not."""
    names = [["anna", "muller"], ["hans", "muller"], ["erik", "muller"]]
    first = pick(["muler"], dict(enumerate(names, start=1)))
    again = pick(["muler"], dict(enumerate(reversed(names), start=1)))

    def words(found, rows):
        return [rows[candidate.subject_id - 1] for candidate in found]

    assert words(first, names) == words(again, list(reversed(names)))
    assert words(first, names) == sorted(names)


def test_rows_alike_the_last_that_fits_all_come():
    """The index keeps a name's words, not their order: Yael Ben-Yossi and
    Yossi Ben-Yael are alike to it, so neither is left out by its id."""
    names = {
        1: ["dana", "ben", "yossi"],
        2: ["yossi", "ben", "yael"],
        3: ["yael", "ben", "yossi"],
    }

    found = pick_similar(
        query=["yosi", "ben", "yael"],
        typed={"yosi", "ben", "yael"},
        names={("lead", pk): words for pk, words in names.items()},
        crowds={"yosi": 1, "ben": 1, "yael": 1},
        limit=1,
    )

    assert sorted(ids(found)) == [2, 3]
