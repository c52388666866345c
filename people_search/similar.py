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
from people_search.embeddings import EmbeddingError, embedding_provider
from people_search.models import NameEmbedding

logger = logging.getLogger(__name__)

# Below this many embeddings a household is scanned exactly (bench/README.md).
EXACT_SCAN_BELOW = 20_000
# Cosine similarity a name must reach to be worth showing (tuned in bench/).
SIMILARITY_FLOOR = 0.55
CANDIDATES = 24
_COUNT_TTL = 300

_EXACT = """
    WITH household_names AS MATERIALIZED (
        SELECT subject, subject_id, embedding
        FROM people_search_nameembedding
        WHERE household_id = %(household)s AND subject = ANY(%(subjects)s)
    )
    SELECT subject, subject_id, 1 - (embedding <=> %(vector)s::vector) AS similarity
    FROM household_names
    ORDER BY embedding <=> %(vector)s::vector
    LIMIT %(limit)s
"""

_INDEXED = """
    SELECT subject, subject_id, 1 - (embedding <=> %(vector)s::vector) AS similarity
    FROM people_search_nameembedding
    WHERE household_id = %(household)s AND subject = ANY(%(subjects)s)
    ORDER BY embedding <=> %(vector)s::vector
    LIMIT %(limit)s
"""


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
    try:
        vector = embedding_provider().embed([name])[0]
    except EmbeddingError:
        logger.warning("Similar-name search skipped: embedding failed.", exc_info=True)
        return []
    parameters = {
        "household": household.pk,
        "subjects": list(subjects),
        "vector": str(vector),
        # Rows have a vector per word as well, so ask for more than needed.
        "limit": limit * 3,
    }
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if embedded_count(household) < EXACT_SCAN_BELOW:
                cursor.execute(_EXACT, parameters)
            else:
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cursor.execute("SET LOCAL hnsw.ef_search = 100")
                cursor.execute(_INDEXED, parameters)
            rows = cursor.fetchall()
    except DatabaseError:
        logger.warning(
            "Similar-name search skipped: vector query failed.", exc_info=True
        )
        return []
    # A row has a vector per word too: keep its best. Relaxed order may also
    # return near-ties out of order, so order exactly here.
    best: dict[tuple[str, int], float] = {}
    for subject, subject_id, similarity in rows:
        key = (subject, subject_id)
        best[key] = max(similarity, best.get(key, -1.0))
    found = [
        SimilarName(subject, subject_id, similarity)
        for (subject, subject_id), similarity in best.items()
        if similarity >= floor
    ]
    found.sort(key=lambda candidate: -candidate.similarity)
    return found[:limit]


def embedded_count(household: Household) -> int:
    """Return how many names the household has embedded, cached for minutes."""
    key = f"people_search:embedded:{household.pk}"
    count = cache.get(key)
    if count is None:
        count = NameEmbedding.objects.filter(household=household).count()
        cache.set(key, count, _COUNT_TTL)
    return count
