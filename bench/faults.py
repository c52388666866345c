"""Fault run: stop, then hang, the bundled PostgreSQL under a small load.

    .venv/bin/python bench/faults.py [--clients 4] [--baseline 10] [--hang 20]
        [--after 15] [--server granian|gunicorn] [--workers N] [--threads 2]

Runs the app server with the production settings (as bench/load.py does, on the
bench database: YORIK_DATA_DIR, default .yorik-bench) and keeps `--clients`
threads calling find_person over REST and MCP as the demo household's admin.
Then, in turn:

1. baseline: nothing happens for `--baseline` seconds;
2. stop: PostgreSQL is stopped (pg_ctl stop -m fast); the app starts the
   bundled server again on its next connection, so the phase lasts until a
   call succeeds again, plus `--after` seconds;
3. hang: every PostgreSQL process is stopped with SIGSTOP for `--hang`
   seconds (it answers nothing, not even a cancel), then continued with
   SIGCONT, and watched for `--after` seconds.

Reported per phase: answers by status (and client-side errors such as an
empty reply or a timeout), the slowest answer, and the recovery time: from
the fault (stop) or its end (SIGCONT) to the first 200. A request may take
no longer than gunicorn's 30-second worker timeout (under either server),
and every answer must be a 200 or a JSON 503 `unavailable` with Retry-After;
anything else fails the run (exit code 1). Results: bench/results/faults.{md,json}.
"""

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests
from django.conf import settings
from django.db import connections

# Importing bench.load sets the production environment and Django up on the
# bench database, as its load run has them.
from bench.load import (
    RESULTS,
    import_load_households,
    issue_household_tokens,
    stop,
    wait_until_ready,
)
from bench.servers import (
    add_server_arguments,
    free_port,
    server_defaults,
    start_server,
)
from yorik.database import server_status, stop_server

MCP_VERSION = "2026-07-28"
# gunicorn's default worker timeout, which kills a request that takes longer;
# under granian, which has none, the same bound on every answer.
WORKER_TIMEOUT = 30


@dataclass
class Answer:
    """One request as the client saw it."""

    surface: str
    started: float
    seconds: float
    outcome: str  # the status code, or the client-side error's name
    unavailable_shape: bool = True  # a 503 carried code "unavailable" and Retry-After


def call(session: requests.Session, url: str, token: str, surface: str) -> Answer:
    headers = {"Authorization": f"Bearer {token}"}
    if surface == "rest":
        target = f"{url}/api/skills/find_person/call/"
        body: dict[str, Any] = {"query": "Oma"}
    else:
        target = f"{url}/mcp/"
        headers |= {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MCP_VERSION,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "find_person",
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "find_person",
                "arguments": {"query": "Oma"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
    started = time.monotonic()
    try:
        response = session.post(
            target, json=body, headers=headers, timeout=WORKER_TIMEOUT + 30
        )
    except requests.RequestException as error:
        return Answer(
            surface, started, time.monotonic() - started, type(error).__name__
        )
    answer = Answer(
        surface, started, time.monotonic() - started, str(response.status_code)
    )
    if response.status_code == 503:
        answer.unavailable_shape = _is_unavailable(response, surface)
    return answer


def _is_unavailable(response: requests.Response, surface: str) -> bool:
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return False
    code = error.get("code") if surface == "rest" else error.get("data", {}).get("code")
    return code == "unavailable" and "Retry-After" in response.headers


class Load:
    """Client threads calling the app until stopped, recording every answer."""

    def __init__(self, *, url: str, token: str, clients: int) -> None:
        self.url, self.token = url, token
        self.answers: list[Answer] = []
        self.lock = threading.Lock()
        self.running = threading.Event()
        self.threads = [
            threading.Thread(target=self.run, args=(index,), daemon=True)
            for index in range(clients)
        ]

    def run(self, index: int) -> None:
        session = requests.Session()
        calls = 0
        while self.running.is_set():
            surface = "mcp" if (index + calls) % 4 == 3 else "rest"
            answer = call(session, self.url, self.token, surface)
            with self.lock:
                self.answers.append(answer)
            calls += 1
            if answer.outcome != "200":
                time.sleep(0.2)  # as a client backing off, without hammering

    def __enter__(self) -> "Load":
        self.running.set()
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        for thread in self.threads:
            thread.join(timeout=WORKER_TIMEOUT + 40)

    def first_success_after(self, moment: float) -> float | None:
        with self.lock:
            done = [
                a.started + a.seconds
                for a in self.answers
                if a.outcome == "200" and a.started >= moment
            ]
        return min(done) - moment if done else None

    def wait_for_success_after(self, moment: float, *, limit: float) -> float | None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            recovered = self.first_success_after(moment)
            if recovered is not None:
                return recovered
            time.sleep(0.2)
        return None


def postgres_processes(data_dir: Path) -> list[int]:
    """Return the postmaster's pid, then its children's (the backends and workers)."""
    status = server_status(data_dir)
    if not status.running or status.pid is None:
        raise RuntimeError("The bundled PostgreSQL is not running.")
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == status.pid:
            children.append(int(stat.parent.name))
    return [status.pid, *children]


def summarise(name: str, answers: list[Answer], **facts: Any) -> dict[str, Any]:
    outcomes: dict[str, int] = {}
    for answer in answers:
        outcomes[answer.outcome] = outcomes.get(answer.outcome, 0) + 1
    times = [answer.seconds for answer in answers]
    return {
        "phase": name,
        "requests": len(answers),
        "outcomes": dict(sorted(outcomes.items())),
        "p50_s": round(statistics.median(times), 3) if times else None,
        "max_s": round(max(times), 2) if times else None,
        "bad_503": sum(a.outcome == "503" and not a.unavailable_shape for a in answers),
        **facts,
    }


def write_results(result: dict[str, Any]) -> str:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "faults.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"{result['clients']} clients (REST and MCP find_person) against "
        f"{result['server']} ({result['workers']} workers x {result['threads']} "
        f"threads; no answer may take {WORKER_TIMEOUT} s) on "
        f"{result['cores']} cores; connect timeout {result['connect_timeout']} s, "
        f"statement timeout {result['statement_timeout']} s. "
        f"Load average before {result['load_average_before']}, "
        f"after {result['load_average_after']}.",
        "",
        "| phase | requests | answers | p50 s | max s | recovery s |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for phase in result["phases"]:
        outcomes = ", ".join(f"{k}: {v}" for k, v in phase["outcomes"].items())
        recovery = phase.get("recovery_s")
        lines.append(
            f"| {phase['phase']} | {phase['requests']} | {outcomes} | "
            f"{phase['p50_s']} | {phase['max_s']} | "
            f"{'' if recovery is None and 'recovery_s' not in phase else recovery} |"
        )
    if result["problems"]:
        lines += ["", "Problems:", "", *[f"- {p}" for p in result["problems"]]]
    markdown = "\n".join(lines) + "\n"
    (RESULTS / "faults.md").write_text(markdown)
    return markdown


def problems_of(phases: list[dict[str, Any]]) -> list[str]:
    found = []
    for phase in phases:
        unexpected = {
            outcome: count
            for outcome, count in phase["outcomes"].items()
            if outcome not in {"200", "503"}
        }
        if unexpected:
            found.append(f"{phase['phase']}: unexpected answers {unexpected}")
        if phase["bad_503"]:
            found.append(
                f"{phase['phase']}: {phase['bad_503']} 503s without the "
                "unavailable error or Retry-After"
            )
        if phase["max_s"] is not None and phase["max_s"] >= WORKER_TIMEOUT:
            found.append(f"{phase['phase']}: a request took {phase['max_s']} s")
        if "recovery_s" in phase and phase["recovery_s"] is None:
            found.append(f"{phase['phase']}: no call succeeded again")
        if not phase["requests"]:
            found.append(f"{phase['phase']}: no requests")
    return found


def main() -> int:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--baseline", type=float, default=10)
    parser.add_argument("--hang", type=float, default=20)
    parser.add_argument("--after", type=float, default=15)
    add_server_arguments(parser)
    args = parser.parse_args()
    server_defaults(args)
    database = settings.DATABASES["default"]
    if "DATA_DIR" not in database:
        parser.error("Needs the bundled PostgreSQL: unset DATABASE_URL.")
    data_dir = Path(database["DATA_DIR"])

    (household,) = import_load_households(count=1)
    token = issue_household_tokens(household=household)[0]
    # The server is stopped and hung below: this process lets go of it first.
    connections.close_all()

    phases = []
    with tempfile.TemporaryDirectory(prefix="yorik-faults-") as scratch:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(scratch) / "server.log"
        server = start_server(
            port=port,
            workers=args.workers,
            log=log,
            server=args.server,
            worker_class=args.worker_class,
            threads=args.threads,
        )
        try:
            wait_until_ready(server=server, url=url, token=token, log=log)
            load_before = os.getloadavg()
            with Load(url=url, token=token, clients=args.clients) as load:
                started = time.monotonic()
                time.sleep(args.baseline)
                marks = [("baseline", started, time.monotonic(), {})]

                stopped_at = time.monotonic()
                stop_server(data_dir)
                recovery = load.wait_for_success_after(stopped_at, limit=120)
                time.sleep(args.after)
                marks.append(
                    (
                        "stop (app restarts it)",
                        stopped_at,
                        time.monotonic(),
                        {"recovery_s": recovery and round(recovery, 2)},
                    )
                )

                pids = postgres_processes(data_dir)
                hung_at = time.monotonic()
                for pid in pids:
                    os.kill(pid, signal.SIGSTOP)
                try:
                    time.sleep(args.hang)
                finally:
                    for pid in reversed(pids):
                        os.kill(pid, signal.SIGCONT)
                continued_at = time.monotonic()
                recovery = load.wait_for_success_after(continued_at, limit=120)
                time.sleep(args.after)
                marks.append(
                    (
                        f"hang (SIGSTOP {args.hang:g} s)",
                        hung_at,
                        time.monotonic(),
                        {
                            "recovery_s": recovery and round(recovery, 2),
                            "processes_stopped": len(pids),
                        },
                    )
                )
            load_after = os.getloadavg()
        finally:
            stop(server)
        server_log = log.read_text()

    for name, begin, end, facts in marks:
        # A request belongs to the phase it ended in: one cut off by the stop
        # is the stop's.
        answers = [a for a in load.answers if begin <= a.started + a.seconds < end]
        phases.append(summarise(name, answers, **facts))
    result = {
        "cores": cores,
        "clients": args.clients,
        "server": args.server,
        "workers": args.workers,
        "threads": args.threads,
        "connect_timeout": database["OPTIONS"].get("connect_timeout"),
        "statement_timeout": os.environ.get("YORIK_DB_STATEMENT_TIMEOUT", "10"),
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in load_after],
        "phases": phases,
        "slowest": [asdict(a) for a in sorted(load.answers, key=lambda a: -a.seconds)][
            :5
        ],
    }
    result["problems"] = problems_of(phases)
    if "WORKER TIMEOUT" in server_log:
        result["problems"].append("gunicorn killed a worker (WORKER TIMEOUT)")
    print(write_results(result))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
