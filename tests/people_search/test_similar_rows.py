"""The similar-name lane's rows for a query of one word, read from each near
word's first rows, against the grouping of every row the near words reach."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from people_search.engine import similar
from people_search.index import similar as similar_index
from people_search.index.models import NameWord
from tests.builders import build_lead, build_member

# Rows of each name: (first, last, how many). The close spellings Mayer,
# Meyer and Maier sound as Meier: one group of one score.
CROWDED = [
    ("Anna", "Mayer", 60),
    ("Ben", "Meyer", 50),
    ("Carl", "Meier", 25),
    ("Dora", "Meier-Meyer", 5),
    ("Eva", "Maier", 3),
    ("Finn", "Meiners", 5),
]
FEW = [
    ("Anna", "Mayer", 8),
    ("Ben", "Meyer", 8),
    ("Carl", "Meier", 20),
    ("Dora", "Meier-Meyer", 5),
    ("Eva", "Maier", 3),
    ("Finn", "Meiners", 5),
]


def spellings(household, names):
    """Rows on the near words, some using two close words, some the query's
    word as written; members and leads."""
    for first, last, count in names:
        for _ in range(count):
            build_lead(household, first, last_name=last)
    for index in range(5):
        build_member(household, f"meyer{index}", first_name="Gil", last_name="Meyer")
    return household


def rows(sql, parameters):
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        found = cursor.fetchall()
    literal = {(subject, id) for subject, id, words, _ in found if "meier" in words}
    others = {(subject, id) for subject, id, words, _ in found if "meier" not in words}
    return others, len(literal), found[0][3] if found else None


@pytest.mark.parametrize(
    ("names", "query", "expected"),
    [
        # The spellings of Meier's sound are more rows than are scored: they
        # are left out whole, and Meiners below them, whatever their ids; a
        # literal match of "meier" is kept, and with it the crowd.
        (CROWDED, "meier", (0, 1, [148])),
        (CROWDED, "meir", (0, 0, None)),
        # They fit: every row of every close group is read (for "meir", the
        # Meiers too, which are no literal match of it).
        (FEW, "meier", (29, 1, [49])),
        (FEW, "meir", (24, 25, [49])),
    ],
)
def test_one_words_first_rows_rank_as_every_row_would(
    household, names, query, expected
):
    """(Rows without the word "meier", rows with it, the crowd.) Every row
    close to the query counts in the crowd (Dora Meier-Meyer by two words,
    counted once), told with the rows read."""
    household = spellings(household, names)
    near = NameWord.objects.filter(household=household).values_list("id", "word")
    scores = similar.word_scores([query], list(near))
    subjects = ["member", "lead"]

    one_word = similar.rows_statement(
        scores, household_id=household.pk, words=1, literal=True, subjects=subjects
    )
    every_row = (
        similar._rows_sql(1),
        {
            **one_word.params,
            "positions": scores.positions,
            "exact": scores.exact,
            "literal": True,
        },
    )

    others, literal, crowds = rows(one_word.sql, one_word.params)
    assert (len(others), literal, crowds) == expected
    assert (others, literal, crowds) == rows(*every_row)


# Names of one household, a few rows each: spellings alike, shared first
# names and surnames, a double name, initials.
SMALL = [
    ("Anna", "Mayer", 3),
    ("Ben", "Meyer", 2),
    ("Carl", "Meier", 2),
    ("Dora", "Meier-Meyer", 1),
    ("Eva", "Maier", 1),
    ("Finn", "Meiners", 1),
    ("Anna", "Schmidt", 2),
    ("Jürgen", "Schmitt", 1),
    ("Yael", "Ben-David", 1),
    ("Erik", "Lindenlechner", 1),
]
QUERIES = [
    "meier",
    "meir",
    "Anna Meier",
    "Ana Mayr",
    "A. Meyer",
    "Meier, Carl",
    "Herr Schmid",
    "Jurgen Schmit",
    "yael ben dvid",
    "Peter Lindenlechnr",
    "M3ier",
    "Anna Schmidt",
    "Zacharias",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("query", QUERIES)
def test_rows_read_with_the_near_words_answer_as_the_ranked_rows_do(household, query):
    """Where the subjects have no more rows than are ranked, the lane reads
    every row reached in the near words' statement: the same names, found
    in one statement instead of two."""
    for first, last, count in SMALL:
        for _ in range(count):
            build_lead(household, first, last_name=last)
    build_member(household, "carl", first_name="Carl", last_name="Maier")
    subjects = ["member", "lead"]
    rows = sum(count for *_, count in SMALL) + 1
    assert similar.reads_every_row(rows)
    similar_index.vocabulary_size(household.pk)

    ranked = similar_index.find_similar_names(
        household_id=household.pk, name=query, subjects=subjects
    )
    with CaptureQueriesContext(connection) as reached_statements:
        reached = similar_index.find_similar_names(
            household_id=household.pk, name=query, subjects=subjects, rows=rows
        )

    assert reached == ranked
    assert len(reached_statements) == 1
