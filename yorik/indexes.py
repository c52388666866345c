"""GIN indexes for searches: trigram, array and household-first.

PostgreSQL adds the rows written to a GIN index to a pending list first and
folds them into the index later, once the list outgrows its limit (4 MB by
default) or VACUUM comes by. Every scan of the index reads the whole list:
after imports of the bench's size, 100 to 375 pages of it, and
find_known_provider at 10,000 contacts took 22.7 ms (p50) where it took 11.8
once the lists were folded in (bench/README.md, "GIN pending lists"). These
indexes keep the list to the smallest limit, 64 kB: the writer folds it in as
it goes, which cost a 50,000-contact import about a fifth of its rate (1,144
to 1,209 contacts a second against 1,455 to 1,488), where writing every
entry at once (fastupdate off) cost a third (971).
"""

from django.contrib.postgres.indexes import GinIndex, OpClass

# kB; PostgreSQL's smallest.
PENDING_LIST_LIMIT = 64


def search_index(*expressions, fields=(), name: str) -> GinIndex:
    """Return a GIN index whose pending list stays short."""
    return GinIndex(
        *expressions,
        fields=fields,
        name=name,
        gin_pending_list_limit=PENDING_LIST_LIMIT,
    )


def trigram_index(field: str, name: str) -> GinIndex:
    """Return a trigram GIN index that serves LIKE '%term%' on the field."""
    return search_index(OpClass(field, name="gin_trgm_ops"), name=name)


def household_trigram_index(field: str, name: str) -> GinIndex:
    """Return a GIN index of the household and the field's trigrams (btree_gin).

    One index answers `household_id = … AND field LIKE '%term%'`, and the
    planner costs it as the narrow read it is: beside a trigram index of
    every household's rows it often preferred to read the whole household
    through its B-tree and test each row (11 ms for 45,000 leads, 0.5 ms
    here). A query without the household still uses the trigrams alone.
    """
    return search_index("household", OpClass(field, name="gin_trgm_ops"), name=name)
