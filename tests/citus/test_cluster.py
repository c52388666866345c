"""The Citus test cluster serves tables distributed by household, as Yorik's will be.

Two co-located tables spread over both workers carry a pgvector HNSW index
and a pg_trgm GIN index, a reference table is joined to them, and a shard
moves between the workers while its household keeps answering.
"""

from collections.abc import Iterator

import psycopg
import pytest

from tests.citus.cluster import HOST

pytestmark = pytest.mark.citus

SCHEMA = [
    "CREATE TABLE person_kinds (id int PRIMARY KEY, label text NOT NULL)",
    "SELECT create_reference_table('person_kinds')",
    """CREATE TABLE people (
        household_id bigint,
        id bigint,
        kind_id int NOT NULL REFERENCES person_kinds,
        name text NOT NULL,
        embedding vector(3) NOT NULL,
        PRIMARY KEY (household_id, id)
    )""",
    "SELECT create_distributed_table('people', 'household_id', shard_count := 4)",
    """CREATE TABLE channels (
        household_id bigint,
        id bigint,
        person_id bigint NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (household_id, id),
        FOREIGN KEY (household_id, person_id) REFERENCES people
    )""",
    "SELECT create_distributed_table('channels', 'household_id', "
    "colocate_with := 'people')",
    "CREATE INDEX people_embedding ON people USING hnsw (embedding vector_cosine_ops)",
    "CREATE INDEX people_name_trigrams ON people USING gin (name gin_trgm_ops)",
    "INSERT INTO person_kinds VALUES (1, 'family'), (2, 'provider')",
]
PEOPLE = [  # household_id, id, kind_id, name, embedding
    (1, 1, 1, "Anna Müller", "[1,0,0]"),
    (2, 1, 1, "Anne Mueller", "[0.9,0.1,0]"),
    (3, 1, 2, "Hans Schmidt", "[0,1,0]"),
    (4, 1, 2, "Jonas Schmitt", "[0,0.9,0.1]"),
    (5, 1, 1, "Müller Praxis", "[0.5,0.5,0]"),
    (6, 1, 2, "Dr. Weber", "[0,0,1]"),
]
CHANNELS = [  # household_id, id, person_id, value
    (1, 1, 1, "+49 30 1234567"),
    (3, 1, 1, "hans@example.org"),
]
SHARDS = 4


@pytest.fixture(scope="module")
def coordinator(citus_cluster) -> Iterator[psycopg.Connection]:
    """Return a connection to the coordinator of a database with the tables above."""
    citus_cluster.create_database("smoke")
    with psycopg.connect(citus_cluster.url("smoke"), autocommit=True) as connection:
        for statement in SCHEMA:
            connection.execute(statement)
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO people VALUES (%s, %s, %s, %s, %s)", PEOPLE)
            cursor.executemany("INSERT INTO channels VALUES (%s, %s, %s, %s)", CHANNELS)
        yield connection


def placement(connection: psycopg.Connection, household: int) -> tuple[int, int]:
    """Return the shard holding a household's people and its worker's port."""
    row = connection.execute(
        "SELECT shardid, nodeport FROM citus_shards"
        " WHERE shardid = get_shard_id_for_distribution_column('people', %s)",
        [household],
    ).fetchone()
    assert row is not None
    return row


def plan_with_indexes_forced(connection: psycopg.Connection, query: str) -> str:
    """Return the EXPLAIN of every shard's task, with sequential scans off there."""
    with connection.transaction():
        connection.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        connection.execute("SET LOCAL enable_seqscan = off")
        connection.execute("SET LOCAL citus.explain_all_tasks = on")
        rows = connection.execute(f"EXPLAIN {query}").fetchall()
    return "\n".join(line for (line,) in rows)


def test_households_live_on_both_workers(citus_cluster, coordinator):
    ports = {placement(coordinator, household)[1] for household, *_ in PEOPLE}

    assert ports == {worker.port for worker in citus_cluster.workers}


def test_nearest_embeddings_come_from_every_shard_through_hnsw(coordinator):
    query = "SELECT name FROM people ORDER BY embedding <=> '[1,0,0]' LIMIT 3"

    nearest = [name for (name,) in coordinator.execute(query)]
    plan = plan_with_indexes_forced(coordinator, query)

    assert nearest == ["Anna Müller", "Anne Mueller", "Müller Praxis"]
    assert f"Task Count: {SHARDS}" in plan
    assert plan.count("Index Scan using people_embedding") == SHARDS


def test_similar_names_come_from_every_shard_through_trigrams(coordinator):
    query = (
        "SELECT name, round(similarity(name, 'Anna Mueller')::numeric, 2)"
        " FROM people WHERE name % 'Anna Mueller' ORDER BY 2 DESC"
    )

    similar = coordinator.execute(query).fetchall()
    plan = plan_with_indexes_forced(coordinator, query)

    assert [(name, float(score)) for name, score in similar] == [
        ("Anne Mueller", 0.73),
        ("Anna Müller", 0.56),
    ]
    assert plan.count("Bitmap Index Scan on people_name_trigrams") == SHARDS


def test_reference_table_joins_distributed_people(coordinator):
    counts = coordinator.execute(
        "SELECT k.label, count(*) FROM people p"
        " JOIN person_kinds k ON k.id = p.kind_id"
        " GROUP BY k.label ORDER BY k.label"
    ).fetchall()

    assert counts == [("family", 3), ("provider", 3)]


def test_moved_shard_keeps_answering_for_its_household(citus_cluster, coordinator):
    shard, source = placement(coordinator, 1)
    (target,) = [w.port for w in citus_cluster.workers if w.port != source]

    coordinator.execute(
        "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s)",
        [shard, HOST, source, HOST, target],
    )
    coordinator.execute(
        "INSERT INTO people VALUES (1, 2, 1, 'Ben Müller', '[1,0.1,0]')"
    )

    assert placement(coordinator, 1) == (shard, target)
    rows = coordinator.execute(
        "SELECT p.name, c.value, k.label FROM people p"
        " JOIN person_kinds k ON k.id = p.kind_id"
        " LEFT JOIN channels c"
        "  ON c.household_id = p.household_id AND c.person_id = p.id"
        " WHERE p.household_id = 1 ORDER BY p.id"
    ).fetchall()
    assert rows == [
        ("Anna Müller", "+49 30 1234567", "family"),
        ("Ben Müller", None, "family"),
    ]
