"""Keep the embedded words of names in step with the names, after commit.

The name index knows no domain rows: callers hand it a household id, a
subject, row ids and a function that reads their names. Embedding may call a
remote API, so it runs once the writing transaction has committed, never
while its row locks are held.
"""

import logging
import threading
from collections.abc import Callable, Iterable, Mapping

from django.db import transaction

from people_search.engine.text import name_words
from people_search.index.embeddings import EmbeddingError, embedding_provider
from people_search.index.models import NameWord, NameWordUse
from yorik.bulk import cyclic_gc_paused

logger = logging.getLogger(__name__)

# Rows written in this thread whose names wait for the commit to be indexed.
_queue = threading.local()

# Rows named and stored per step of the on-commit indexing, and per INSERT:
# a bulk write of any size takes a few statements per batch and bounded memory.
INDEX_BATCH = 5000

NameLoader = Callable[[int, list[int]], Mapping[int, str | None]]
"""Read the rows' names now: {row id: name, or None for a row never embedded}."""


def embedded_words(name: str) -> set[str]:
    """Return the words of a name that are embedded: folded, two letters or more."""
    return {word for word in name_words(name) if len(word) > 1}


def index_after_commit(
    *, household_id: int, subject: str, ids: Iterable[int], load_names: NameLoader
) -> None:
    """Index these rows' names once the current transaction commits.

    Ids queued in one transaction are indexed together, with one call of
    `load_names` per household, subject and INDEX_BATCH ids, so a bulk write
    embeds each of its new words once. Ids of a rolled-back write may linger
    in the queue; their rows no longer exist, so the loader names none of
    them and they are skipped. Outside a transaction the rows are indexed at once.
    """
    pending = _pending()
    pending.setdefault((household_id, subject, load_names), set()).update(ids)
    transaction.on_commit(_index_pending)


def _pending() -> dict[tuple[int, str, NameLoader], set[int]]:
    if not hasattr(_queue, "pending"):
        _queue.pending = {}
    return _queue.pending


def _index_pending() -> None:
    pending = _pending()
    with cyclic_gc_paused():
        while pending:
            (household_id, subject, load_names), ids = pending.popitem()
            ordered = sorted(ids)
            for start in range(0, len(ordered), INDEX_BATCH):
                chunk = ordered[start : start + INDEX_BATCH]
                names = load_names(household_id, chunk)
                store_name_words(
                    household_id=household_id, subject=subject, names=names
                )


def store_name_words(
    *, household_id: int, subject: str, names: Mapping[int, str | None]
) -> None:
    """Make the words recorded for these rows match their names.

    A name of None drops the row's words (a row that is never embedded). A
    word is embedded once per household, the first time a name uses it.
    """
    wanted = {
        (pk, word)
        for pk, name in names.items()
        if name is not None
        for word in embedded_words(name)
    }
    with transaction.atomic():
        uses = NameWordUse.objects.filter(
            subject=subject, subject_id__in=list(names)
        ).values_list("pk", "subject_id", "word__word")
        stored = {(subject_id, word): pk for pk, subject_id, word in uses}
        stale = [pk for key, pk in stored.items() if key not in wanted]
        if stale:
            NameWordUse.objects.filter(pk__in=stale).delete()
    missing = sorted(wanted - set(stored))
    if not missing:
        return
    # Embedding happens outside any transaction: it may wait on a remote API.
    words = _word_ids(household_id, {word for _, word in missing})
    NameWordUse.objects.bulk_create(
        (
            NameWordUse(
                household_id=household_id,
                subject=subject,
                subject_id=pk,
                word_id=words[word],
            )
            for pk, word in missing
            if word in words
        ),
        batch_size=INDEX_BATCH,
        ignore_conflicts=True,
    )


def _word_ids(household_id: int, words: set[str]) -> dict[str, int]:
    """Return the ids of these words, embedding the ones the household lacks.

    Words that cannot be embedded now are left out: similar-name search
    degrades to text and phone for them until the next write or
    `manage.py reindex_names`.
    """
    known = dict(
        NameWord.objects.filter(household_id=household_id, word__in=words).values_list(
            "word", "pk"
        )
    )
    new = sorted(words - set(known))
    if new:
        try:
            vectors = embedding_provider().embed(new)
        except EmbeddingError:
            logger.warning("Could not embed %d name words.", len(new), exc_info=True)
            return known
        NameWord.objects.bulk_create(
            [
                NameWord(household_id=household_id, word=word, embedding=vector)
                for word, vector in zip(new, vectors, strict=True)
            ],
            batch_size=INDEX_BATCH,
            ignore_conflicts=True,
        )
        known.update(
            NameWord.objects.filter(
                household_id=household_id, word__in=new
            ).values_list("word", "pk")
        )
    return known


def forget_household_words(*, household_id: int) -> None:
    """Drop every embedded word of the household, before embedding it anew."""
    NameWord.objects.filter(household_id=household_id).delete()


def count_household_words(*, household_id: int) -> int:
    """Return how many distinct name words the household has embedded."""
    return NameWord.objects.filter(household_id=household_id).count()
