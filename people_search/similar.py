"""Similar names: the nearest name embeddings of a household.

A small household is scanned exactly, which is both faster and complete; a
large one asks the HNSW index with iterative scan, so filtering by household
still yields enough rows. The benchmark in bench/ measured where the two
cross (see EXACT_SCAN_BELOW).
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.db import DatabaseError, connection, transaction

from household.models import Household
from people_search.embeddings import EmbeddingError, embedding_provider, name_words
from people_search.models import NameEmbedding

logger = logging.getLogger(__name__)

# Below this many member and lead embeddings a household is scanned exactly.
# Measured on 2 cores in a table of 800,000 embeddings: at 31,000 and 92,000
# the HNSW path's recall@24 was 0.30 and 0.03 (its walk is trapped among
# identical name vectors) and its p95 up to 205 ms, while the exact scan took
# 42 and 117 ms p95; at 308,000 the exact scan took 908 ms, the index 14 ms
# with recall 0.76 (bench/README.md, "People search at scale").
EXACT_SCAN_BELOW = 100_000
# Cosine similarity a name must reach to be worth showing (tuned in bench/).
SIMILARITY_FLOOR = 0.45
CANDIDATES = 24
_COUNT_TTL = 300

# Each query word is compared with every embedded name and name word; a row
# is similar when every query word has a close match among its vectors.
# The words are materialised so each is cast to a vector once; inlined, the
# cast ran for every row it was compared with (12x slower, bench/README.md).
_NEAREST = """
    WITH household_names AS NOT MATERIALIZED (
        SELECT subject, subject_id, embedding FROM people_search_nameembedding
        WHERE household_id = %(household)s AND subject = ANY(%(subjects)s)
    ),
    words AS MATERIALIZED (
        SELECT position, vector::vector AS vector
        FROM unnest(%(vectors)s::text[]) WITH ORDINALITY AS word(vector, position)
    )
    SELECT words.position, nearest.subject, nearest.subject_id, nearest.similarity
    FROM words
    CROSS JOIN LATERAL (
        SELECT subject, subject_id, 1 - (embedding <=> words.vector) AS similarity
        FROM household_names
        ORDER BY embedding <=> words.vector
        LIMIT %(per_word)s
    ) AS nearest
    WHERE nearest.similarity >= %(floor)s
"""
# Enough nearest vectors per word that a common first name does not crowd out
# the row whose other word is the one searched for.
_PER_WORD = 200
_MAX_WORDS = 4
_SAME_WORD = 0.999


@dataclass(frozen=True)
class SimilarName:
    subject: str
    subject_id: int
    similarity: float


def find_similar_names(
    *,
    household: Household,
    name: str,
    subjects: Sequence[str],
    limit: int = CANDIDATES,
    floor: float = SIMILARITY_FLOOR,
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
        "household": household.pk,
        "subjects": list(subjects),
        "vectors": [str(vector) for vector in vectors],
        "per_word": _PER_WORD,
        "floor": floor,
    }
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if embedded_count(household, subjects) < EXACT_SCAN_BELOW:
                # No index scan, so no HNSW: the household's rows come through
                # its B-tree and are sorted, exactly (twice as fast as
                # materialising them first, bench/README.md).
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


def embedded_count(household: Household, subjects: Sequence[str]) -> int:
    """Return how many embeddings of these subjects a household has, cached.

    Only the searched subjects count: they are what an exact scan reads.
    """
    key = f"people_search:embedded:{household.pk}:{','.join(sorted(subjects))}"
    count = cache.get(key)
    if count is None:
        count = NameEmbedding.objects.filter(
            household=household, subject__in=list(subjects)
        ).count()
        cache.set(key, count, _COUNT_TTL)
    return count
