"""Give the planner statistics of the tables a bulk write filled, before it returns.

Until a table is analysed, the planner plans with the statistics it had
before the write: right after a household of 50,000 contacts is loaded,
find_person by phone reads all of them and probes the channel index for each
(100 ms), where it probes that index once (under 1 ms) on statistics that
know the household (docs/performance.md, "The first query after an import").
Autovacuum analyses such a table, but only when its launcher next visits the
database (`autovacuum_naptime`, a minute by default) and a worker is free.
So every bulk write (a household bundle, a vCard file, the Paperless mirror,
an iCalendar file, a CardDAV pull) asks for its tables to be analysed as it
commits, by autovacuum's own rule: a table is analysed when the rows changed
since its last analysis exceed `autovacuum_analyze_threshold` (50) plus
`autovacuum_analyze_scale_factor` (0.1) of the rows it held then. Below
that, its statistics still describe it within a tenth, and a small write
into a large household costs no ANALYZE, which reads up to 30,000 rows of
each table (300 times `default_statistics_target`).

On Citus (settings.YORIK_CITUS) a household's rows are in one shard of each
table, on a worker, where the count of changed rows belongs to the session
Citus wrote them through. There the household's shards alone are analysed,
by a function Citus runs on their worker (yorik.citus.HOUSEHOLD_FUNCTIONS),
when a shard has grown by more than a tenth, plus a few pages, since its
last analysis. The tables that stay on the coordinator are analysed there,
as on one server.
"""

from collections.abc import Iterable
from contextlib import nullcontext

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Model

from yorik.tenancy import household_tables

# Autovacuum's analyse threshold (the server's settings), over the rows the
# planner believes the table holds (reltuples, -1 before any analysis).
CHANGED_TABLES = """
SELECT stats.relname
FROM pg_stat_user_tables AS stats
JOIN pg_class ON pg_class.oid = stats.relid
WHERE stats.relid IN (SELECT to_regclass(name) FROM unnest(%s::text[]) AS name)
  AND stats.n_mod_since_analyze
      > current_setting('autovacuum_analyze_threshold')::float8
      + current_setting('autovacuum_analyze_scale_factor')::float8
      * greatest(pg_class.reltuples, 0)
ORDER BY stats.relname
"""


def analyze_after_commit(
    models: Iterable[type[Model]], *, household_id: int, using: str = DEFAULT_DB_ALIAS
) -> None:
    """Analyse the models' tables that the household's write changed enough,
    once it commits.

    A write that rolls back analyses nothing; outside a transaction the
    tables are checked at once. A failure to analyse is logged, not raised:
    the write has committed, and autovacuum analyses the tables later.
    """
    tables = sorted({model._meta.db_table for model in models})

    # A function, not a partial: Django names a robust callback that fails
    # by its __qualname__.
    def analyze_changed() -> None:
        analyze_changed_tables(tables, household_id=household_id, using=using)

    transaction.on_commit(analyze_changed, using=using, robust=True)


def analyze_changed_tables(
    tables: Iterable[str], *, household_id: int, using: str = DEFAULT_DB_ALIAS
) -> list[str]:
    """Analyse the tables changed past autovacuum's threshold; return their names.

    On Citus, the household's shards of its tables that grew past a tenth,
    and the coordinator's own tables as on one server; before
    `distribute_tables` has distributed the tables (and created the function
    that does this), they are all still the coordinator's own.
    """
    connection = connections[using]
    tables = list(tables)
    changed: list[str] = []
    if settings.YORIK_CITUS and _distributed(connection):
        household = household_tables()
        shards = [t for t in tables if t in household]
        tables = [t for t in tables if t not in household]
        # Citus runs the function on the household's worker when it is
        # called outside a transaction, as on_commit calls it. Inside one
        # it runs on the coordinator, which holds no shard, and a savepoint
        # keeps a failure there from spoiling the transaction.
        with (
            transaction.atomic(using=using)
            if connection.in_atomic_block
            else nullcontext(),
            connection.cursor() as cursor,
        ):
            cursor.execute(
                "SELECT yorik_analyze_household_shards(%s::bigint, %s::text[])",
                [household_id, shards],
            )
            (changed,) = cursor.fetchone()
    if not tables:
        return changed
    with connection.cursor() as cursor:
        # A backend hands its counts of changed rows to the statistics views
        # at most once a second, as it goes idle; forced, this statement's
        # end hands over those of the write that just committed.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(CHANGED_TABLES, [list(tables)])
        here = [name for (name,) in cursor.fetchall()]
        for name in here:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(name)}")
    return changed + here


def _distributed(connection) -> bool:
    """Return whether distribute_tables has made the database's household
    tables Citus's (and created yorik_analyze_household_shards)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_regprocedure("
            "'yorik_analyze_household_shards(bigint, text[])') IS NOT NULL"
        )
        (distributed,) = cursor.fetchone()
    return distributed
