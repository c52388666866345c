"""Similar names: rows whose every name word is near a word of the query.

Each distinct word of a household's names is embedded once (NameWord). A
small vocabulary is scanned exactly, which is both fast and complete; a large
one asks the HNSW index with iterative scan, so filtering by household still
yields enough words. bench/people.py measured where the two cross (see
EXACT_SCAN_BELOW).
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.db import DatabaseError, connection, transaction

from people_search.engine.embeddings import EmbeddingError, embedding_provider
from people_search.engine.models import NameWord
from people_search.engine.text import name_words

logger = logging.getLogger(__name__)

# Below this many distinct name words a household's vocabulary is scanned
# exactly; above, the HNSW index is faster (bench/README.md, "People search at
# scale").
EXACT_SCAN_BELOW = 20_000
# Cosine similarity a name must reach to be worth showing (tuned in bench/).
SIMILARITY_FLOOR = 0.45
# Trigram similarity of two words that makes one a typo of the other.
TRIGRAM_FLOOR = 0.4
CANDIDATES = 24
_COUNT_TTL = 300

# For each query word, the household's words near it by embedding (the
# nearest, above the floor) or by trigram similarity, which catches typos the
# embedding misses; then the rows whose names use those words. The query
# words are materialised so each is cast to a vector once; inlined, the cast
# ran for every row it was compared with.
_NEAREST = """
    WITH query_words AS MATERIALIZED (
        SELECT position, word, vector::vector AS vector
        FROM unnest(%(words)s::text[], %(vectors)s::text[])
            WITH ORDINALITY AS query_word(word, vector, position)
    ),
    nearest AS (
        SELECT query_words.position, near.id, near.similarity
        FROM query_words
        CROSS JOIN LATERAL (
            SELECT id, 1 - (embedding <=> query_words.vector) AS similarity
            FROM people_search_nameword
            WHERE household_id = %(household)s
            ORDER BY embedding <=> query_words.vector
            LIMIT %(per_word)s
        ) AS near
        WHERE near.similarity >= %(floor)s
        UNION ALL
        SELECT query_words.position, name_word.id,
            similarity(name_word.word, query_words.word)
        FROM query_words
        JOIN people_search_nameword AS name_word
            ON name_word.household_id = %(household)s
            AND name_word.word %% query_words.word
            AND similarity(name_word.word, query_words.word) >= %(trigram_floor)s
    )
    SELECT nearest.position, uses.subject, uses.subject_id, max(nearest.similarity)
    FROM nearest
    JOIN people_search_nameworduse AS uses
        ON uses.word_id = nearest.id AND uses.subject = ANY(%(subjects)s)
    GROUP BY 1, 2, 3
"""
# Distinct words near one query word: spelling variants, not a crowd.
_PER_WORD = 40
_MAX_WORDS = 4
_SAME_WORD = 0.999


@dataclass(frozen=True)
class SimilarName:
    subject: str
    subject_id: int
    similarity: float


def find_similar_names(
    *,
    household_id: int,
    name: str,
    subjects: Sequence[str],
    limit: int = CANDIDATES,
    floor: float = SIMILARITY_FLOOR,
    trigram_floor: float = TRIGRAM_FLOOR,
) -> list[SimilarName]:
    """Return the household's names nearest to `name` that reach the floor.

    Never raises: when the name cannot be embedded or the vector query
    fails, log why and return no candidates, so search falls back to text
    and phone.
    """
    words = list(dict.fromkeys(w for w in name_words(name) if len(w) > 1))
    if not words:
        return []
    words = words[:_MAX_WORDS]
    try:
        vectors = embedding_provider().embed(words)
    except EmbeddingError:
        logger.warning("Similar-name search skipped: embedding failed.", exc_info=True)
        return []
    parameters = {
        "household": household_id,
        "subjects": list(subjects),
        "words": words,
        "vectors": [str(vector) for vector in vectors],
        "per_word": _PER_WORD,
        "floor": floor,
        "trigram_floor": trigram_floor,
    }
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if vocabulary_size(household_id) < EXACT_SCAN_BELOW:
                # No index scan, so no HNSW: the household's words come through
                # its unique B-tree (a bitmap scan) and are sorted, exactly.
                cursor.execute("SET LOCAL enable_indexscan = off")
            else:
                # The HNSW index walks, filtered by household.
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cursor.execute("SET LOCAL hnsw.ef_search = %s", [_PER_WORD])
            cursor.execute(_NEAREST, parameters)
            rows = cursor.fetchall()
    except DatabaseError:
        logger.warning(
            "Similar-name search skipped: vector query failed.", exc_info=True
        )
        return []
    return _rows_matching_every_word(rows, word_count=len(words))[:limit]


def _rows_matching_every_word(
    rows: Sequence[tuple[int, str, int, float]], *, word_count: int
) -> list[SimilarName]:
    """Return the rows that every query word came close to, most similar first.

    A row's similarity is that of its weakest word, so "Anna Mayer" finds
    "Anna Meier" but not every other Anna.
    """
    best: dict[tuple[str, int], dict[int, float]] = {}
    for position, subject, subject_id, similarity in rows:
        per_word = best.setdefault((subject, subject_id), {})
        per_word[position] = max(similarity, per_word.get(position, -1.0))
    found = [
        SimilarName(subject, subject_id, min(per_word.values()))
        for (subject, subject_id), per_word in best.items()
        # Rows whose every word is the query's own are literal matches, which
        # text search finds; they must not take a similar name's place.
        if len(per_word) == word_count and min(per_word.values()) < _SAME_WORD
    ]
    found.sort(key=lambda candidate: (-candidate.similarity, candidate.subject_id))
    return found


def vocabulary_size(household_id: int) -> int:
    """Return how many distinct name words the household has embedded, cached."""
    key = f"people_search:vocabulary:{household_id}"
    count = cache.get(key)
    if count is None:
        count = NameWord.objects.filter(household_id=household_id).count()
        cache.set(key, count, _COUNT_TTL)
    return count
