"""Turn a migrated database on a Citus coordinator into Yorik's distributed layout.

Tables of a household's rows (yorik.tenancy.is_household_row) are
distributed by `household_id`, all co-located, so that a household's rows
of every table are on one node and a statement naming the household runs
there alone. Every other table of a model is a reference table, copied to
every node, so that any node can join it; the tables in
yorik.tenancy.LOCAL_TABLES stay on the coordinator, unknown to Citus.

Tables are distributed parents first: Citus needs a foreign key's target
distributed (or copied) before the table that references it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from graphlib import TopologicalSorter

from django.apps import apps
from django.db import connection, transaction

from yorik.tenancy import HOUSEHOLD_FIELD, LOCAL_TABLES, is_household_row

DISTRIBUTED = "distributed"
REFERENCE = "reference"
# A table Citus knows that stays on the coordinator.
COORDINATOR = "coordinator"
# A table Citus does not know.
LOCAL = "local"


# pg_dist_partition's (partmethod, repmodel): hash-distributed; or not
# distributed and copied by two-phase commit (a reference table) or kept in
# one place (a table on the coordinator that Citus knows).
PLACEMENT_METHODS = {("h", "s"): DISTRIBUTED, ("n", "t"): REFERENCE}


class NotCitus(Exception):
    """The database is not a Citus coordinator."""


@dataclass(frozen=True)
class Placement:
    table: str
    kind: str  # DISTRIBUTED, REFERENCE or LOCAL


def table_kinds() -> dict[str, str]:
    """Return every model table that leaves the coordinator and how."""
    kinds: dict[str, str] = {}
    for model in apps.get_models(include_auto_created=True):
        table = model._meta.db_table
        if table in LOCAL_TABLES or not model._meta.managed:
            continue
        kinds[table] = DISTRIBUTED if is_household_row(model) else REFERENCE
    return kinds


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
            "WHERE key.contype = 'f' AND key.connamespace = 'public'::regnamespace"
        )
        return [ForeignKey(*row) for row in cursor.fetchall()]


def placements() -> list[Placement]:
    """Return the tables to place, each after the tables it references."""
    kinds = table_kinds()
    parents: dict[str, set[str]] = {table: set() for table in kinds}
    for key in foreign_keys():
        if key.table in kinds and key.parent in kinds and key.table != key.parent:
            parents[key.table].add(key.parent)
    order = TopologicalSorter(parents)
    return [Placement(table, kinds[table]) for table in order.static_order()]


def placed_tables() -> dict[str, str]:
    """Return the tables Citus already places, by kind."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, partmethod, repmodel FROM pg_dist_partition "
            "JOIN pg_class ON pg_class.oid = logicalrelid"
        )
        return {
            table: PLACEMENT_METHODS.get((method, model), COORDINATOR)
            for table, method, model in cursor.fetchall()
        }


def is_citus() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        return cursor.fetchone() is not None


def _detach_foreign_keys(tables: set[str]) -> list[str]:
    """Drop the foreign keys from the tables to be placed; return the
    statements that add them back.

    Placing a table referenced by a table still on the coordinator alone
    (or referencing one) makes Citus convert that other table in place,
    which it cannot do for a table with an identity column, as Django's
    ids are. Placed without their foreign keys, the tables are then joined
    up again, each key checked by Citus on the nodes.
    """
    quote = connection.ops.quote_name
    restore = []
    with connection.cursor() as cursor:
        for key in foreign_keys():
            if key.table not in tables:
                continue
            table, name = quote(key.table), quote(key.name)
            cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
            restore.append(
                f"ALTER TABLE {table} ADD CONSTRAINT {name} {key.definition}"
            )
    return restore


def _recreate_unknown_to_citus(table: str) -> None:
    """Drop a table of yorik.tenancy.LOCAL_TABLES that Citus knows and create
    it again, empty, unknown to Citus.

    Citus's undistribute_table refuses tables with an identity column, as
    Django's ids are. Only short-lived rows are kept in these tables (request
    counts of the current window), so nothing of worth is lost. A table that
    skipped the write-ahead log (a migration's RunSQL) skips it again.
    """
    model = next(model for model in apps.get_models() if model._meta.db_table == table)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence = 'u' FROM pg_class WHERE oid = %s::regclass",
            [table],
        )
        (unlogged,) = cursor.fetchone()
    with connection.schema_editor() as editor:
        editor.delete_model(model)
        editor.create_model(model)
        if unlogged:
            editor.execute(f"ALTER TABLE {editor.quote_name(table)} SET UNLOGGED")


def distribute(*, shard_count: int) -> Iterator[tuple[Placement, bool]]:
    """Place every table not placed yet; yield each with whether it was placed now.

    Idempotent: tables Citus places already are passed over. The first
    distributed table gets `shard_count` shards and every other one is
    co-located with it. A table of yorik.tenancy.LOCAL_TABLES that Citus
    knows is given back to the coordinator alone. One transaction: a failure
    places nothing.
    """
    if not is_citus():
        raise NotCitus("The database has no citus extension.")
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Foreign keys to reference tables are added in the same
            # transaction as the shards: one connection per node.
            cursor.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        placed = placed_tables()
        order = placements()
        restore = _detach_foreign_keys(
            {placement.table for placement in order if placement.table not in placed}
        )
        colocate_with = next(
            (table for table, kind in placed.items() if kind == DISTRIBUTED), None
        )
        for table in sorted(LOCAL_TABLES & placed.keys()):
            _recreate_unknown_to_citus(table)
            yield Placement(table, LOCAL), True
        for placement in order:
            if placement.table in placed:
                yield placement, False
                continue
            with connection.cursor() as cursor:
                if placement.kind == REFERENCE:
                    cursor.execute(
                        "SELECT create_reference_table(%s)", [placement.table]
                    )
                elif colocate_with is None:
                    cursor.execute(
                        "SELECT create_distributed_table(%s, %s, shard_count => %s)",
                        [placement.table, f"{HOUSEHOLD_FIELD}_id", shard_count],
                    )
                    colocate_with = placement.table
                else:
                    cursor.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                        [placement.table, f"{HOUSEHOLD_FIELD}_id", colocate_with],
                    )
            yield placement, True
        with connection.cursor() as cursor:
            for statement in restore:
                cursor.execute(statement)


def set_session_defaults(settings: Mapping[str, str]) -> None:
    """Make the settings every new session's defaults in this database, on
    the coordinator and, through Citus, on every worker.

    A statement routed to a worker runs in a session Citus opened there,
    which takes none of the settings the app's session SET on the
    coordinator. Names and values are the app's own constants, written
    out: ALTER DATABASE takes no parameters. Sessions already open keep
    what they had.
    """
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        (database,) = cursor.fetchone()
        for name, value in settings.items():
            cursor.execute(f"ALTER DATABASE {quote(database)} SET {name} = {value}")


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
