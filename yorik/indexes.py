"""GIN indexes for searches: trigram, array and household-first.

PostgreSQL adds the rows written to a GIN index to a pending list first and
folds them into the index later, once the list outgrows its limit (4 MB by
default) or VACUUM comes by. Every scan of the index reads the whole list:
after imports of the bench's size, 100 to 375 pages of it, and
find_known_provider at 10,000 contacts took 22.7 ms (p50) where it took 11.8
once the lists were folded in (docs/performance.md, "GIN pending lists"). These
indexes keep the list to the smallest limit, 64 kB: the writer folds it in as
it goes, which cost a 50,000-contact import about a fifth of its rate (1,144
to 1,209 contacts a second against 1,455 to 1,488), where writing every
entry at once (fastupdate off) cost a third (971).
"""

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db.models.expressions import RawSQL

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


def household_trigram_index(field: str, name: str) -> GinIndex:
    """Return a GIN index of the household and the field's trigrams (btree_gin).

    One index answers `household_id = as_bigint(…) AND field LIKE '%term%'`
    and reads only that household's rows: a trigram index of every
    household's rows finds the Müllers of all of them, and each is read
    from the table before the household is tested (6,240 rows for 1,903 at
    50,000 contacts in the bench database). A query without the household
    still uses the trigrams alone.
    """
    return search_index("household", OpClass(field, name="gin_trgm_ops"), name=name)


def household_array_index(field: str, name: str) -> GinIndex:
    """Return a GIN index of the household and an array field's items
    (btree_gin), as `household_trigram_index` for `field && …` and `@>`."""
    return search_index("household", field, name=name)


def as_bigint(value: int) -> RawSQL:
    """Return the integer as SQL of type bigint, to compare a household
    column with where a household-first GIN index should answer.

    btree_gin's operator class for bigint (PostgreSQL 18) compares it with
    bigint only, and Django writes an id as a plain literal (`178`, an
    integer) or binds it as int2 or int4: the index then serves the
    trigrams alone and the household is tested row by row after reading
    each from the table.
    """
    return RawSQL("%s::bigint", (value,))
