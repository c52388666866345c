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
"""

from collections.abc import Iterable

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Model

# Autovacuum's analyse threshold (the server's settings), over the rows the
# planner believes the table holds (reltuples, -1 before any analysis).
CHANGED_TABLES = """
SELECT stats.relname
FROM pg_stat_user_tables AS stats
JOIN pg_class ON pg_class.oid = stats.relid
WHERE stats.relid IN (SELECT to_regclass(name) FROM unnest(%s::text[]) AS name)
  -- On a Citus coordinator the rows are in shards on the workers, whose
  -- own autovacuum analyses them.
  AND NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')
  AND stats.n_mod_since_analyze
      > current_setting('autovacuum_analyze_threshold')::float8
      + current_setting('autovacuum_analyze_scale_factor')::float8
      * greatest(pg_class.reltuples, 0)
ORDER BY stats.relname
"""


def analyze_after_commit(
    models: Iterable[type[Model]], *, using: str = DEFAULT_DB_ALIAS
) -> None:
    """Analyse the models' tables that the write changed enough, once it commits.

    A write that rolls back analyses nothing; outside a transaction the
    tables are checked at once. A failure to analyse is logged, not raised:
    the write has committed, and autovacuum analyses the tables later.
    """
    tables = sorted({model._meta.db_table for model in models})

    # A function, not a partial: Django names a robust callback that fails
    # by its __qualname__.
    def analyze_changed() -> None:
        analyze_changed_tables(tables, using=using)

    transaction.on_commit(analyze_changed, using=using, robust=True)


def analyze_changed_tables(
    tables: Iterable[str], *, using: str = DEFAULT_DB_ALIAS
) -> list[str]:
    """Analyse the tables changed past autovacuum's threshold; return their names."""
    connection = connections[using]
    with connection.cursor() as cursor:
        # A backend hands its counts of changed rows to the statistics views
        # at most once a second, as it goes idle; forced, this statement's
        # end hands over those of the write that just committed.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(CHANGED_TABLES, [list(tables)])
        changed = [name for (name,) in cursor.fetchall()]
        for name in changed:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(name)}")
    return changed
