"""The similar-name lane's rows for a query of one word, read from each near
word's first rows, against the grouping of every row the near words reach."""

import pytest
from django.db import connection

from people_search.engine import similar
from people_search.index.models import NameWord
from tests.builders import build_lead, build_member


@pytest.fixture
def spellings(household):
    """More rows tie on the near words than the lane scores; some use two
    close words, some the query's word as written; members and leads."""
    for first, last, count in [
        ("Anna", "Mayer", 30),
        ("Ben", "Meyer", 30),
        ("Carl", "Meier", 25),
        ("Dora", "Meier-Meyer", 5),
        ("Eva", "Maier", 3),
        ("Finn", "Meiners", 5),
    ]:
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


@pytest.mark.parametrize("query", ["meier", "meir"])
def test_one_words_first_rows_rank_as_every_row_would(spellings, query):
    near = NameWord.objects.filter(household=spellings).values_list("id", "word")
    scores = similar.word_scores([query], list(near))
    subjects = ["member", "lead"]

    one_word = similar.rows_statement(
        scores, household_id=spellings.pk, words=1, literal=True, subjects=subjects
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
    assert len(others) == similar._SCORED_ROWS
    # Every row is close to the query (Dora Meier-Meyer by two words, counted once).
    assert crowds == [98]
    assert (others, literal, crowds) == rows(*every_row)
    assert literal == (1 if query == "meier" else 0)
