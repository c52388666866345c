"""Turn a migrated database on a Citus coordinator into Yorik's distributed layout.

Tables of a household's rows (yorik.tenancy.is_household_row) are
distributed by `household_id`, all co-located, so that a household's rows
of every table are on one node and a statement naming the household runs
there alone. Every other table stays on the coordinator, unknown to Citus:
the tables every household shares, which every API call reads before its
household is known (its token), and Django's own. PostgreSQL plans a
statement on those alone as on one server, and keeps its plan.

Citus checks the foreign keys between a household's tables, which are
co-located, but none from a distributed table to a table it does not know:
those are dropped as their table is distributed (yorik.tenancy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import connection, transaction

from yorik.tenancy import HOUSEHOLD_FIELD, model_tables

DISTRIBUTED = "distributed"
# Any other way Citus places a table (a reference table, a Citus local table).
OTHER = "other"


class NotCitus(Exception):
    """The database is not a Citus coordinator."""


class UnexpectedPlacement(Exception):
    """Citus places a table that this layout keeps on the coordinator alone,
    or places a household table otherwise than distributed by household."""


@dataclass(frozen=True)
class ForeignKey:
    table: str
    parent: str
    name: str
    definition: str


def foreign_keys() -> list[ForeignKey]:
    """Return the foreign keys between the tables of the public schema."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT child.relname, parent.relname, key.conname, "
            "pg_get_constraintdef(key.oid) "
            "FROM pg_constraint AS key "
            "JOIN pg_class AS child ON child.oid = key.conrelid "
            "JOIN pg_class AS parent ON parent.oid = key.confrelid "
            "WHERE key.contype = 'f' AND key.connamespace = 'public'::regnamespace "
            "ORDER BY child.relname, key.conname"
        )
        return [ForeignKey(*row) for row in cursor.fetchall()]


def placed_tables() -> dict[str, str]:
    """Return the tables Citus places, each DISTRIBUTED (by hash, as
    distribute_tables does) or OTHER."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, partmethod FROM pg_dist_partition "
            "JOIN pg_class ON pg_class.oid = logicalrelid"
        )
        return {
            table: DISTRIBUTED if method == "h" else OTHER
            for table, method in cursor.fetchall()
        }


def is_citus() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        return cursor.fetchone() is not None


@dataclass
class Distribution:
    """What `distribute` did: the tables it distributed, those Citus had
    distributed already, and the foreign keys it dropped."""

    distributed: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    keys_dropped: list[ForeignKey] = field(default_factory=list)


def distribute(*, shard_count: int) -> Distribution:
    """Distribute every household table not distributed yet.

    Idempotent: tables Citus distributes already are passed over. The first
    distributed table gets `shard_count` shards and every other one is
    co-located with it. One transaction: a failure changes nothing.

    Each table is distributed without its foreign keys (Citus would
    otherwise want the tables they point to placed too); then those between
    household tables are added back, checked by Citus on each node, and
    those to or from the coordinator's tables are left dropped.
    """
    if not is_citus():
        raise NotCitus("The database has no citus extension.")
    done = Distribution()
    models = model_tables()
    tables = sorted(table for table, household in models.items() if household)
    with transaction.atomic():
        with connection.cursor() as cursor:
            # The foreign keys are added in the same transaction as the
            # shards: one connection per node.
            cursor.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        placed = placed_tables()
        unexpected = sorted(
            table
            for table, kind in placed.items()
            if table in models and (not models[table] or kind != DISTRIBUTED)
        )
        if unexpected:
            raise UnexpectedPlacement(
                f"Citus places {', '.join(unexpected)}, which this layout keeps "
                "on the coordinator alone (or distributes by household)."
            )
        done.already = [table for table in tables if table in placed]
        done.distributed = [table for table in tables if table not in placed]
        restore = _detach_foreign_keys(set(done.distributed), set(tables), done)
        colocate_with = done.already[0] if done.already else None
        with connection.cursor() as cursor:
            for table in done.distributed:
                if colocate_with is None:
                    cursor.execute(
                        "SELECT create_distributed_table(%s, %s, shard_count => %s)",
                        [table, f"{HOUSEHOLD_FIELD}_id", shard_count],
                    )
                    colocate_with = table
                else:
                    cursor.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                        [table, f"{HOUSEHOLD_FIELD}_id", colocate_with],
                    )
            for statement in restore:
                cursor.execute(statement)
    return done


def _detach_foreign_keys(
    placing: set[str], household: set[str], done: Distribution
) -> list[str]:
    """Drop the foreign keys to and from the tables about to be distributed;
    return the statements that add back those between household tables, and
    note the others in `done`."""
    quote = connection.ops.quote_name
    restore = []
    with connection.cursor() as cursor:
        for key in foreign_keys():
            if key.table not in placing and key.parent not in placing:
                continue
            table, name = quote(key.table), quote(key.name)
            cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
            if key.table in household and key.parent in household:
                restore.append(
                    f"ALTER TABLE {table} ADD CONSTRAINT {name} {key.definition}"
                )
            else:
                done.keys_dropped.append(key)
    return restore


def set_session_defaults(settings: Mapping[str, str]) -> None:
    """Make the settings every new session's defaults in this database, on
    the coordinator and, through Citus, on every worker.

    A statement routed to a worker runs in a session Citus opened there,
    which takes none of the settings the app's session has on the
    coordinator. ALTER DATABASE takes no parameters: PostgreSQL quotes each
    name and value (format). Sessions already open keep what they had.
    """
    with connection.cursor() as cursor:
        for name, value in settings.items():
            cursor.execute(
                "SELECT format('ALTER DATABASE %%I SET %%s = %%L', "
                "current_database(), %s::text, %s::text)",
                [name, value],
            )
            cursor.execute(cursor.fetchone()[0])


# Functions Citus runs on the worker that holds a household's shards (their
# distribution argument is the household), called outside a transaction.
# yorik_analyze_household_shards analyses the household's shards of the
# named tables that have grown by more than a tenth, plus a few pages, since
# their last analysis, and returns those tables (yorik.statistics). Growth,
# not the statistics views' count of changed rows: that count belongs to the
# worker session the rows were written through until it hands it over, and
# the call may land in another.
HOUSEHOLD_FUNCTIONS = {
    "yorik_analyze_household_shards(bigint, text[])": """
        CREATE OR REPLACE FUNCTION yorik_analyze_household_shards(
            household bigint, tables text[]
        ) RETURNS text[] LANGUAGE plpgsql AS $$
        DECLARE
            name text;
            shard regclass;
            analysed text[] := '{}';
        BEGIN
            FOREACH name IN ARRAY tables LOOP
                shard := to_regclass(shard_name(
                    name::regclass,
                    get_shard_id_for_distribution_column(name::regclass, household)
                ));
                -- Not where the shard is (called inside a transaction).
                CONTINUE WHEN shard IS NULL;
                IF pg_relation_size(shard) / current_setting('block_size')::bigint
                    > (SELECT 1.1 * greatest(relpages, 0) + 5
                       FROM pg_class WHERE oid = shard)
                THEN
                    EXECUTE format('ANALYZE %s', shard);
                    analysed := analysed || name;
                END IF;
            END LOOP;
            RETURN analysed;
        END
        $$
    """,
}


def create_household_functions() -> list[str]:
    """Create HOUSEHOLD_FUNCTIONS on every node, each run where its
    household's shards are; return their signatures."""
    colocate_with = min(
        table for table, kind in placed_tables().items() if kind == DISTRIBUTED
    )
    with connection.cursor() as cursor:
        for signature, definition in HOUSEHOLD_FUNCTIONS.items():
            cursor.execute(definition)
            cursor.execute(
                "SELECT create_distributed_function(%s, 'household', "
                "colocate_with => %s)",
                [signature, colocate_with],
            )
    return list(HOUSEHOLD_FUNCTIONS)
