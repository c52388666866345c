"""The similar-name lane, run: typos found among the household's name words.

The query's words are embedded (people_search.index.embeddings), then two
statements the engine builds (people_search.engine.similar) find the words
near them and the rows using those, which the engine scores; where the
subjects have few rows, one statement finds both.
"""

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import DatabaseError, connection, transaction

from people_search.engine.query import Query
from people_search.engine.similar import (
    CANDIDATES,
    PER_WORD,
    SCORE_FLOOR,
    SCORE_MARGIN,
    SIMILARITY_FLOOR,
    TRIGRAM_FLOOR,
    SimilarName,
    WordScores,
    heard_terms,
    heard_words_statement,
    lane_name,
    near_words_statement,
    pick_similar,
    query_words,
    reached_names,
    reads_every_row,
    rows_statement,
    surname_words,
    typed_words,
    with_sounds,
    word_scores,
)
from people_search.index.embeddings import EmbeddingError, embedding_provider
from people_search.index.models import NameWord
from people_search.index.names import embedded_words
from yorik.sizes import household_rows

logger = logging.getLogger(__name__)

# Below this many distinct name words (no more than yorik.sizes counts up to)
# a household's vocabulary is scanned exactly; above, the HNSW index is faster
# and as complete: with 11,000 words (100,000 census-style names) the scan took
# twice as long (docs/performance.md, "Name quality").
EXACT_SCAN_BELOW = 5_000


UnembeddedNames = Mapping[tuple[str, int], str]
"""Names of rows that are never embedded, by (subject, id): scored as the
lane's own rows are, without a word of theirs in the index."""


def similar_name_ids(
    *,
    household_id: int,
    query: Query | None,
    subjects: Sequence[str],
    unembedded: UnembeddedNames | None = None,
    rows: int | None = None,
) -> dict[str, list[int]]:
    """Return, per subject, the ids of rows whose names are like the query's.

    One lookup for every subject; only for a query the lane answers
    (`lane_name`). `unembedded` rows compete with the lane's rows; `rows`
    is as `find_similar_names` takes it.
    """
    found: dict[str, list[int]] = {subject: [] for subject in subjects}
    name = lane_name(query) if query is not None else None
    if name is None:
        return found
    for candidate in find_similar_names(
        household_id=household_id,
        name=name,
        subjects=list(subjects),
        unembedded=unembedded,
        rows=rows,
    ):
        found[candidate.subject].append(candidate.subject_id)
    return found


def with_heard_words(*, household_id: int, query: Query) -> Query | None:
    """Return the query whose terms carry the household's name words heard as
    them but spelled otherwise ("Catrin" for "Katrin"), or None when there
    are none: one SELECT, none for a query without a word to hear.
    """
    words = heard_terms(query)
    if not words:
        return None
    statement = heard_words_statement(household_id=household_id, words=words)
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.params)
        return with_sounds(query, cursor.fetchall())


def find_similar_names(
    *,
    household_id: int,
    name: str,
    subjects: Sequence[str],
    limit: int = CANDIDATES,
    floor: float = SIMILARITY_FLOOR,
    score_floor: float = SCORE_FLOOR,
    margin: float = SCORE_MARGIN,
    unembedded: UnembeddedNames | None = None,
    rows: int | None = None,
) -> list[SimilarName]:
    """Return the household's names closest to `name` as a whole, best first.

    `unembedded` names are scored beside the rows the index finds. `rows`
    says how many rows the subjects have at most (yorik.sizes), if the
    caller knows: with few, the lane is one statement (`reads_every_row`).
    Never raises: when the name cannot be embedded or the vector query
    fails, log why and return no candidates, so search falls back to text
    and phone.
    """
    words = query_words(name)
    fetched = [word for word in words if len(word) > 1]
    if not fetched:
        return []
    try:
        vectors = embedding_provider().embed(fetched)
    except EmbeddingError:
        logger.warning("Similar-name search skipped: embedding failed.", exc_info=True)
        return []
    typed = typed_words(name)
    exact = vocabulary_size(household_id) < EXACT_SCAN_BELOW
    every_row = reads_every_row(rows)
    try:
        # A statement that fails must not spoil a caller's transaction, so
        # inside one the lane has a savepoint; on its own it needs none (the
        # HNSW settings come with the connection, `use_lane_settings`).
        with (
            transaction.atomic()
            if connection.in_atomic_block
            else contextlib.nullcontext()
        ):
            near = near_words_statement(
                household_id=household_id,
                words=fetched,
                vectors=vectors,
                exact=exact,
                floor=floor,
                reaching=subjects if every_row else None,
            )
            with (
                connection.preparing_cursor() if exact else connection.cursor()
            ) as cursor:
                cursor.execute(near.sql, near.params)
                found = cursor.fetchall()
            if every_row:
                names, crowds = reached_names(fetched, found)
            else:
                names, crowds = _ranked_names(
                    word_scores(fetched, found),
                    household_id=household_id,
                    words=fetched,
                    literal=typed == set(fetched),
                    subjects=subjects,
                )
    except DatabaseError:
        logger.warning(
            "Similar-name search skipped: vector query failed.", exc_info=True
        )
        return []
    for key, unembedded_name in (unembedded or {}).items():
        names[key] = sorted(embedded_words(unembedded_name))
    return pick_similar(
        query=words,
        typed=typed,
        names=names,
        crowds=crowds,
        surname=surname_words(name),
        score_floor=score_floor,
        margin=margin,
        limit=limit,
    )


def _ranked_names(
    scores: WordScores,
    *,
    household_id: int,
    words: list[str],
    literal: bool,
    subjects: Sequence[str],
) -> tuple[dict[tuple[str, int], list[str]], dict[str, int]]:
    """Return the names of the rows the scored near words reach that rank
    best, and each query word's crowd: one more statement, none when no
    near word scored."""
    if not scores.ids:
        return {}, {}
    statement = rows_statement(
        scores,
        household_id=household_id,
        words=len(words),
        literal=literal,
        subjects=subjects,
    )
    with connection.preparing_cursor() as cursor:
        cursor.execute(statement.sql, statement.params)
        rows = cursor.fetchall()
    names = {(subject, subject_id): name for subject, subject_id, name, _ in rows}
    return names, dict(zip(words, rows[0][3], strict=True)) if rows else {}


# The settings the lane's near words are found with: the threshold `%`
# compares by, and how the HNSW index walks (on past the household's first
# matches, as far as PER_WORD words). Every session that runs the lane's
# statements needs them: the app's own connections (`use_lane_settings`)
# and, on Citus, the workers' sessions that run them on a household's
# shards, which take them from their database (`manage.py
# distribute_tables`).
LANE_SETTINGS = {
    "pg_trgm.similarity_threshold": f"{TRIGRAM_FLOOR:g}",
    "hnsw.iterative_scan": "relaxed_order",
    "hnsw.ef_search": f"{PER_WORD}",
}


def use_lane_settings(*, connection: Any, **kwargs: Any) -> None:
    """Give a new database connection the lane's settings (LANE_SETTINGS).

    Sent with Django's `connection_created`: once a connection, rather than
    in a transaction of every similar-name search. The values are the
    module's own numbers and words, written out, so they go as one text
    without parameters.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "; ".join(
                    f"SET {name} = {value}" for name, value in LANE_SETTINGS.items()
                )
            )


def vocabulary_size(household_id: int) -> int:
    """Return how many distinct name words the household has embedded, up to
    yorik.sizes.COUNTED_UP_TO: enough to tell an exact scan from the index.

    Counted with the household's other tables and kept in this process's
    memory for a few minutes (yorik.sizes): it only chooses between two ways
    of finding the same near words, so a count or a shared cache's round trip
    on every similar-name search would cost more than it saves.
    """
    return household_rows(NameWord, household_id=household_id)
