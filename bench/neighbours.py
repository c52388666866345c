"""Noisy neighbours: one household's hostile requests beside another's calls.

    .venv/bin/python bench/neighbours.py [--against REV] [--phase-seconds 20]
        [--streams 4] [--items 400000] [--note-kb 480] [--clients 2]
        [--server granian|gunicorn] [--workers N] [--threads N]

Runs the app server with the production settings (as bench/load.py does, on
the bench database: YORIK_DATA_DIR, default .yorik-bench) and keeps
`--clients` threads calling find_person as the admin of one household (the
neighbour). Meanwhile another household, in turn:

1. quiet: sends nothing;
2. huge lists: `--streams` threads each post `search_anything` with `scopes`
   of `--items` zeros, one after the other;
3. vCard uploads: `--streams` threads each upload, through the admin's
   "Import vCard" page (a dry run), a card whose quoted-printable NOTE is
   `--note-kb` KB of soft line breaks.

A phase ends when its time is up and its hostile requests have been
answered. Reported per phase: the neighbour's calls (count, p50, p99, max,
answers by status) and the hostile requests (count, median seconds, largest
answer in bytes). With `--against REV` the phases run first against that
revision's app (a temporary git worktree, this checkout's database), then
against this checkout's, so both are measured on one machine in one run.
Results: bench/results/neighbours.{md,json}.
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests
from django.core.management import call_command

# Importing bench.load sets the production environment and Django up on the
# bench database, as its load run has them.
from bench.checkouts import checkout_of
from bench.django_setup import ROOT
from bench.load import (
    RESULTS,
    import_load_households,
    issue_household_tokens,
    stop,
    wait_until_ready,
)
from bench.servers import (
    add_server_arguments,
    describe_server,
    free_port,
    server_defaults,
    start_server,
)
from household.models import Household, Membership, MembershipStatus, Role

# Every hostile request is given this long before the client gives up on it.
CLIENT_TIMEOUT = 300
PASSWORD = "neighbours-bench-password"  # noqa: S105


@dataclass
class Answer:
    started: float
    seconds: float
    outcome: str
    size: int = 0


class Calls:
    """Threads sending one kind of request in a loop until stopped."""

    def __init__(self, count: int, send: Any) -> None:
        self.send = send
        self.answers: list[Answer] = []
        self.lock = threading.Lock()
        self.running = threading.Event()
        self.threads = [
            threading.Thread(target=self.run, daemon=True) for _ in range(count)
        ]

    def run(self) -> None:
        session = requests.Session()
        while self.running.is_set():
            started = time.monotonic()
            try:
                response = self.send(session)
                answer = Answer(
                    started,
                    time.monotonic() - started,
                    str(response.status_code),
                    len(response.content),
                )
            except requests.RequestException as error:
                answer = Answer(
                    started, time.monotonic() - started, type(error).__name__
                )
            with self.lock:
                self.answers.append(answer)

    def __enter__(self) -> "Calls":
        self.running.set()
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        for thread in self.threads:
            thread.join(timeout=CLIENT_TIMEOUT + 10)


def find_person(url: str, token: str) -> Any:
    def send(session: requests.Session) -> requests.Response:
        return session.post(
            f"{url}/api/skills/find_person/call/",
            json={"query": "Oma"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=CLIENT_TIMEOUT,
        )

    return send


def huge_list(url: str, token: str, items: int) -> Any:
    body = ('{"query": "an", "scopes": [' + ", ".join(["0"] * items) + "]}").encode()

    def send(session: requests.Session) -> requests.Response:
        return session.post(
            f"{url}/api/skills/search_anything/call/",
            data=body,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
            },
            timeout=CLIENT_TIMEOUT,
        )

    return send


def long_note_card(kilobytes: int) -> bytes:
    """Return a vCard 2.1 card whose NOTE is soft line breaks of `=41`."""
    repeats = kilobytes * 1024 // len("=41=\r\n")
    note = "=41=\r\n" * repeats + "=41"
    return (
        "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Nachbar;Nora;;;\r\nFN:Nora Nachbar\r\n"
        f"NOTE;ENCODING=QUOTED-PRINTABLE:{note}\r\nEND:VCARD\r\n"
    ).encode()


class AdminLogin:
    """A logged-in admin session over plain HTTP.

    The production settings mark cookies Secure and check the Referer of
    "secure" requests, so the server trusts X-Forwarded-Proto here and the
    cookies are sent by hand, as a TLS-terminating proxy would let them pass.
    """

    def __init__(self, url: str, username: str) -> None:
        self.url = url
        self.cookies: dict[str, str] = {}
        self.session = requests.Session()
        login = f"{url}/admin/login/"
        page = self.request("get", login)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        self.request(
            "post",
            login,
            data={
                "csrfmiddlewaretoken": token.group(1),
                "username": username,
                "password": PASSWORD,
                "next": "/admin/",
            },
            referer=login,
        )
        if "sessionid" not in self.cookies:
            raise RuntimeError("The admin login failed.")

    def request(
        self,
        method: str,
        url: str,
        *,
        referer: str | None = None,
        session: requests.Session | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        headers = {"X-Forwarded-Proto": "https"}
        if referer is not None:
            headers["Referer"] = referer.replace("http://", "https://")
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        response = (session or self.session).request(
            method,
            url,
            headers=headers,
            allow_redirects=False,
            timeout=CLIENT_TIMEOUT,
            **kwargs,
        )
        self.cookies.update(response.cookies.get_dict())
        return response


def vcard_upload(login: AdminLogin, kilobytes: int) -> Any:
    card = long_note_card(kilobytes)
    page = f"{login.url}/admin/contacts/contact/import-vcard/"

    def send(session: requests.Session) -> requests.Response:
        form = login.request("get", page, session=session)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        return login.request(
            "post",
            page,
            session=session,
            referer=page,
            data={"csrfmiddlewaretoken": token.group(1), "dry_run": "on"},
            files={"file": ("note.vcf", card, "text/vcard")},
        )

    return send


def admin_of(household: Household) -> str:
    """Give the household's first active admin a known password; return the login."""
    membership = (
        Membership.objects.live(household=household)
        .filter(role=Role.ADMIN, status=MembershipStatus.ACTIVE)
        .select_related("profile__user")
        .order_by("pk")
        .first()
    )
    user = membership.profile.user
    user.set_password(PASSWORD)
    user.save(update_fields=["password"])
    return user.get_username()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(answers: list[Answer]) -> dict[str, Any]:
    outcomes: dict[str, int] = {}
    for answer in answers:
        outcomes[answer.outcome] = outcomes.get(answer.outcome, 0) + 1
    times = [answer.seconds for answer in answers]
    return {
        "requests": len(answers),
        "outcomes": dict(sorted(outcomes.items())),
        "p50_s": round(statistics.median(times), 3) if times else None,
        "p99_s": round(percentile(times, 0.99), 3) if times else None,
        "max_s": round(max(times), 3) if times else None,
        "largest_bytes": max((answer.size for answer in answers), default=0),
    }


def run_phases(
    *, app: Path, args: argparse.Namespace, tokens: dict[str, str], username: str
) -> list[dict[str, Any]]:
    """Serve `app` and run the three phases against it."""
    phases = []
    with tempfile.TemporaryDirectory(prefix="yorik-neighbours-") as scratch:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(scratch) / "server.log"
        environment = {**os.environ, "DJANGO_TRUST_X_FORWARDED_PROTO": "1"}
        server = start_server(
            port=port,
            workers=args.workers,
            log=log,
            server=args.server,
            worker_class=args.worker_class,
            threads=args.threads,
            app=app,
            environment=environment,
        )
        try:
            wait_until_ready(server=server, url=url, token=tokens["neighbour"], log=log)
            login = AdminLogin(url, username)
            hostile = {
                "quiet": None,
                f"huge lists ({args.items:,} items)": huge_list(
                    url, tokens["hostile"], args.items
                ),
                f"vCard uploads ({args.note_kb} KB NOTE)": vcard_upload(
                    login, args.note_kb
                ),
            }
            for name, send in hostile.items():
                with ExitStack() as stack:
                    neighbour = stack.enter_context(
                        Calls(args.clients, find_person(url, tokens["neighbour"]))
                    )
                    sender = None
                    if send is not None:
                        sender = stack.enter_context(Calls(args.streams, send))
                    time.sleep(args.phase_seconds)
                    if sender is not None:
                        sender.running.clear()
                        for thread in sender.threads:
                            thread.join(timeout=CLIENT_TIMEOUT + 10)
                phases.append(
                    {
                        "phase": name,
                        "neighbour": summary(neighbour.answers),
                        "hostile": summary(sender.answers) if sender else None,
                    }
                )
        finally:
            stop(server)
    return phases


def write_results(result: dict[str, Any]) -> str:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "neighbours.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"{result['server']} on {result['cores']} cores; the neighbour's "
        f"{result['clients']} clients call find_person while {result['streams']} "
        "hostile streams run in each phase.",
        "",
        "| app | phase | neighbour calls | p50 s | p99 s | max s | hostile "
        "requests | hostile median s | largest answer B |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for app, phases in result["apps"].items():
        for phase in phases:
            near, far = phase["neighbour"], phase["hostile"] or {}
            lines.append(
                f"| {app} | {phase['phase']} | {near['requests']} | {near['p50_s']} "
                f"| {near['p99_s']} | {near['max_s']} | {far.get('requests', '')} "
                f"| {far.get('p50_s', '')} | {far.get('largest_bytes', '')} |"
            )
    markdown = "\n".join(lines) + "\n"
    (RESULTS / "neighbours.md").write_text(markdown)
    return markdown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another revision, measured first")
    parser.add_argument("--phase-seconds", type=float, default=20)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--items", type=int, default=400_000)
    parser.add_argument("--note-kb", type=int, default=480)
    add_server_arguments(parser)
    args = parser.parse_args()
    server_defaults(args)

    # The admin's pages need the static files' manifest in production.
    call_command("collectstatic", interactive=False, verbosity=0)
    hostile, neighbour = import_load_households(count=2)
    tokens = {
        "hostile": issue_household_tokens(household=hostile)[0],
        "neighbour": issue_household_tokens(household=neighbour)[0],
    }
    username = admin_of(hostile)
    apps: dict[str, list[dict[str, Any]]] = {}
    if args.against:
        with checkout_of(args.against) as other:
            apps[args.against] = run_phases(
                app=other, args=args, tokens=tokens, username=username
            )
    apps["this checkout"] = run_phases(
        app=ROOT, args=args, tokens=tokens, username=username
    )
    result = {
        "server": describe_server(args),
        "cores": os.cpu_count(),
        "clients": args.clients,
        "streams": args.streams,
        "apps": apps,
    }
    print(write_results(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
