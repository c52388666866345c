"""The app server the benchmarks run: granian as production serves the app
(docs/operations.md), or gunicorn for a comparison. Imports nothing of Django, so
each benchmark keeps its own settings."""

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

from bench.django_setup import ROOT

BIN = Path(sys.executable).parent
# Production settings for the app served on loopback, less the secret key
# each benchmark draws: a rate limit no benchmark reaches.
LOOPBACK_PRODUCTION = {
    "DJANGO_DEBUG": "0",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    "DJANGO_SECURE_SSL_REDIRECT": "0",
    "YORIK_API_RATE": "1000000/min",
}


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --server, --workers, --threads and --worker-class to `parser`."""
    parser.add_argument("--server", choices=["granian", "gunicorn"], default="granian")
    parser.add_argument(
        "--workers",
        type=int,
        help="default: the cores (granian), twice the cores + 1 (gunicorn)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="threads a worker: granian's blocking threads (default 2) "
        "or gthread's (default 4)",
    )
    parser.add_argument(
        "--worker-class", choices=["sync", "gthread"], default="sync", help="gunicorn"
    )


def server_defaults(args: argparse.Namespace) -> None:
    """Fill in the workers and threads the arguments left out."""
    cores = os.cpu_count() or 1
    if args.workers is None:
        args.workers = cores if args.server == "granian" else 2 * cores + 1
    if args.threads is None:
        args.threads = 2 if args.server == "granian" else 4
    if args.server == "gunicorn" and args.worker_class == "sync":
        args.threads = 1


def free_port() -> int:
    """Return a loopback port free at the moment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(
    *,
    port: int,
    workers: int,
    log: Path,
    server: str = "granian",
    worker_class: str = "sync",
    threads: int = 2,
    app: Path = ROOT,
    environment: dict[str, str] | None = None,
) -> subprocess.Popen:
    """Start gunicorn (`worker_class` workers, `threads` each for gthread) or
    granian (`threads` blocking threads a worker) serving `yorik.wsgi`, with
    this process's environment unless given another."""
    if server == "granian":
        command = [
            str(BIN / "granian"),
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--blocking-threads",
            str(threads),
            "--respawn-failed-workers",
            "--log-level",
            "warning",
            "yorik.wsgi:application",
        ]
    else:
        command = [
            str(BIN / "gunicorn"),
            "yorik.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            worker_class,
            "--threads",
            str(threads),
            "--log-level",
            "warning",
        ]
    with log.open("a") as output:
        return subprocess.Popen(
            command,
            cwd=app,
            env=os.environ.copy() if environment is None else environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def describe_server(args: argparse.Namespace) -> str:
    """Return the server and its workers as the results name them."""
    if args.server == "granian":
        return f"granian ({args.workers} workers x {args.threads} blocking threads)"
    threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
    return f"gunicorn ({args.workers} {args.worker_class} workers{threads})"
