"""Load run: mixed skill calls from several households against the app server.

    .venv/bin/python bench/load.py [--seconds 60] [--users 32] [--households 5]
        [--server granian|gunicorn] [--workers N] [--threads N]
        [--worker-class sync|gthread] [--profile] [--revision REV] [--only TASK]

Needs the bench extra (`pip install -e '.[dev,bench]'`). Runs with the
production settings (DJANGO_DEBUG=0, the database cache for rate limits) on the
bench database (YORIK_DATA_DIR, default .yorik-bench): imports copies of the demo
households under their own slugs and logins, issues one API token per household
admin and member, starts the server as production runs it (docs/operations.md)
(granian: a worker a core, two blocking threads each; or gunicorn, twice the
cores and one sync workers) on a free loopback port, and lets locust
(headless, bench/locustfile.py) call every skill with each household's own names,
phones, contact ids and templates. Any answer but a 200 with the expected JSON
counts as an error. The CPU time the server, PostgreSQL and locust spend during
the run is divided by the calls answered: what one call costs, however busy the
machine. `--profile` records the server's workers with py-spy meanwhile
(bench/results/load-profile.txt, the hottest functions; load-profile.raw, the
stacks, for `py-spy`'s or any flame graph tool). `--revision` serves
another revision's app instead, from a temporary git worktree, with this
checkout's data and locust: run it and this one in turns for a before and
after on a busy machine. `--only list_skills` calls nothing but `GET
/api/skills/`: the request path's own cost (token, rate limit, middleware,
JSON) without a skill's. Results:
bench/results/load.{md,json}; the exit code is 1 when any request failed.
"""

import argparse
import contextlib
import json
import os
import random
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.servers import (
    BIN,
    LOOPBACK_PRODUCTION,
    add_server_arguments,
    describe_server,
    free_port,
    server_defaults,
    start_server,
)

# The data is prepared with the same settings the server runs with, so `migrate`
# creates the cache table that production rate limiting counts in.
PRODUCTION_ENV = {
    **LOOPBACK_PRODUCTION,
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "YORIK_CACHE": "database",
}
os.environ.update(PRODUCTION_ENV)

from bench.checkouts import checkout_of  # noqa: E402
from bench.django_setup import ROOT, setup  # noqa: E402

setup()

import phonenumbers  # noqa: E402
import psutil  # noqa: E402
import requests  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import F  # noqa: E402

from compose.models import LetterTemplate  # noqa: E402
from contacts.models import (  # noqa: E402
    DEFAULT_CONTACT_STATUSES,
    Address,
    ChannelKind,
    Contact,
    ContactAlias,
    ContactChannel,
)
from contacts.providers.categories import CATEGORIES  # noqa: E402
from household.authentication import token_membership  # noqa: E402
from household.models import (  # noqa: E402
    Household,
    Lead,
    Membership,
    MembershipStatus,
    Role,
)
from yorik.bundles import import_household, read_bundle  # noqa: E402
from yorik.database import server_status  # noqa: E402
from yorik.registry import skills_for_tier  # noqa: E402
from yorik.tokens import hash_token, issue_token, revoke_tokens  # noqa: E402

DEMO_DIR = ROOT / "household" / "demo"
RESULTS = ROOT / "bench" / "results"
MAX_SECONDS = 300


def import_load_households(*, count: int) -> list[Household]:
    """Import `count` copies of the demo households, each under its own slug."""
    bundles = [read_bundle(path) for path in sorted(DEMO_DIR.glob("*.json"))]
    households = []
    for index in range(count):
        bundle = json.loads(json.dumps(bundles[index % len(bundles)]))
        source = bundle["household"]["slug"]
        slug = f"load-{index + 1}-{source}"
        rename_people(bundle, prefix=f"{slug}.")
        bundle["household"]["slug"] = slug
        bundle["household"]["name"] += f" (load {index + 1})"
        households.append(import_household(bundle=bundle, replace=True))
    return households


def rename_people(bundle: dict[str, Any], *, prefix: str) -> None:
    """Prefix every username and the references to it: logins are global."""
    for person in bundle.get("people", []):
        person["username"] = prefix + person["username"]
    for lead in bundle.get("leads", []):
        if lead.get("owner"):
            lead["owner"] = prefix + lead["owner"]
    for event in bundle.get("calendar_events", []):
        event["attendees"] = [prefix + name for name in event.get("attendees", [])]


def issue_household_tokens(*, household: Household) -> list[str]:
    """Return a fresh token for each active admin and member of the household."""
    memberships = (
        Membership.objects.live(household=household)
        .filter(role__in=[Role.ADMIN, Role.MEMBER], status=MembershipStatus.ACTIVE)
        .select_related("profile")
    )
    tokens = []
    for membership in memberships:
        revoke_tokens(profile=membership.profile)
        tokens.append(issue_token(profile=membership.profile, name="load")[1])
    return tokens


def skills_listed(tokens: list[str]) -> dict[str, int]:
    """Return how many skills GET /api/skills/ lists for each token: those
    of its caller's tier."""
    return {
        token: len(skills_for_tier(token_membership(hash_token(token)).membership.tier))
        for token in tokens
    }


def as_dialled(e164: str, region: str) -> str:
    """Return the number as dialled in the region: national at home, else with 00."""
    return phonenumbers.format_out_of_country_calling_number(
        phonenumbers.parse(e164), region
    )


def partial(e164: str, region: str) -> list[str]:
    """Return the start of a domestic number, as when only that is remembered."""
    number = phonenumbers.parse(e164)
    if phonenumbers.region_code_for_number(number) != region:
        return []
    return [as_dialled(e164, region)[:7]]


def misspell(name: str, rng: random.Random) -> str:
    """Drop one inner letter, the way a name heard on the phone gets typed."""
    position = rng.randrange(1, len(name) - 1)
    return name[:position] + name[position + 1 :]


def collect_inputs(*, household: Household, rng: random.Random) -> dict[str, Any]:
    """Return realistic skill inputs taken from the household's own rows."""
    region = household.default_region
    contacts = list(
        Contact.objects.filter(household=household, status__in=DEFAULT_CONTACT_STATUSES)
        .order_by("pk")
        .values("id", "display_name", "first_name", "relation")
    )
    profiles = list(
        Membership.objects.live(household=household).values(
            first_name=F("profile__first_name"),
            last_name=F("profile__last_name"),
            phone=F("profile__phone"),
        )
    )
    leads = list(
        Lead.objects.filter(household=household).values(
            "first_name", "last_name", "email", "phone"
        )
    )
    aliases = ContactAlias.objects.filter(
        household=household, contact__status__in=DEFAULT_CONTACT_STATUSES
    ).values_list("name", flat=True)
    channels = ContactChannel.objects.filter(
        household=household,
        contact__status__in=DEFAULT_CONTACT_STATUSES,
        kind__in=[ChannelKind.PHONE, ChannelKind.EMAIL],
    ).values_list("kind", "value")
    with_address = set(
        Address.objects.filter(household=household).values_list("contact_id", flat=True)
    )
    templates = list(
        LetterTemplate.objects.filter(household=household).values_list(
            "template_id", flat=True
        )
    )
    people = [*profiles, *leads]
    phones = [row["phone"] for row in people if row["phone"]]
    last_names = sorted(
        {row["last_name"] for row in people if len(row["last_name"]) >= 5}
    )
    return {
        "contact_names": [c["display_name"] for c in contacts],
        "first_names": sorted({c["first_name"] for c in contacts if c["first_name"]}),
        "descriptors": sorted(
            {*aliases, *(c["relation"].split()[0] for c in contacts if c["relation"])}
        ),
        "channels": [
            {
                "kind": kind,
                "value": as_dialled(value, region)
                if kind == ChannelKind.PHONE
                else value,
            }
            for kind, value in channels
        ],
        "people_names": sorted(
            {p["first_name"] for p in profiles if p["first_name"]}
            | {f"{lead['first_name']} {lead['last_name']}".strip() for lead in leads}
        ),
        "people_emails": [lead["email"] for lead in leads if lead["email"]],
        "people_phones": [as_dialled(phone, region) for phone in phones]
        + [start for phone in phones for start in partial(phone, region)],
        "similar_names": [misspell(name, rng) for name in last_names],
        "contact_ids": [c["id"] for c in contacts],
        "recipients": [
            {
                "contact_id": c["id"],
                "template_id": template,
                "contact_name": c["display_name"],
            }
            for c in contacts
            if c["id"] in with_address or rng.random() < 0.2
            for template in templates
        ],
        "categories": [
            name for category in CATEGORIES for name in (category.id, category.name_de)
        ],
    }


def wait_until_ready(
    *, server: subprocess.Popen, url: str, token: str, log: Path
) -> None:
    """Return once the app answers; raise if the server died or stayed silent."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text()}")
        try:
            response = requests.get(
                f"{url}/api/skills/",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            if response.status_code == 200:
                return
        # A busy machine may keep a worker's first answer waiting.
        except (requests.ConnectionError, requests.Timeout):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the server did not answer within 60 s:\n{log.read_text()}")


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def cpu_seconds(pid: int | None) -> float:
    """Return the CPU time of a process and its children, running and ended."""
    if pid is None:
        return 0.0
    process = psutil.Process(pid)
    times = process.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = child.cpu_times()
            total += times.user + times.system
    return total


def ended_children_cpu_seconds() -> float:
    """Return the CPU time of this process's children that have ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def postmaster_pid() -> int | None:
    """Return the bundled PostgreSQL's pid, or None for a DATABASE_URL server."""
    data_dir = settings.DATABASES["default"].get("DATA_DIR")
    return server_status(Path(data_dir)).pid if data_dir else None


def start_profiler(
    *, server: subprocess.Popen, seconds: int, output: Path
) -> subprocess.Popen:
    """Record the server's workers with py-spy (raw stacks) for the run."""
    command = [
        str(BIN / "py-spy"),
        "record",
        "--pid",
        str(server.pid),
        "--subprocesses",
        "--duration",
        str(seconds),
        "--rate",
        "200",
        "--format",
        "raw",
        "--output",
        str(output),
        "--nonblocking",
        # Only samples that hold the GIL: CPU work, not waits for PostgreSQL.
        "--gil",
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL)


def hottest_functions(raw: Path, *, top: int = 60) -> str:
    """Return the functions most samples were in (self) and under (total)."""
    own: dict[str, int] = {}
    under: dict[str, int] = {}
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        # The process first, then the frames outermost first, each as
        # "function (file:line)": lines of one function are counted together.
        frames = [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")[1:]]
        samples += int(count)
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + int(count)
        for frame in set(frames):
            under[frame] = under.get(frame, 0) + int(count)
    lines = [f"{samples} samples of the server's workers", "", "self %  function"]
    for frame, count in sorted(own.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"{100 * count / samples:6.1f}  {frame}")
    lines += ["", "total %  function"]
    for frame, count in sorted(under.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"{100 * count / samples:6.1f}  {frame}")
    return "\n".join(lines) + "\n"


def run_locust(
    *,
    url: str,
    plan: Path,
    users: int,
    spawn_rate: float,
    seconds: int,
    stats: Path,
    only: str,
) -> float:
    """Run locust headless; return the wall time of the run in seconds."""
    command = [
        str(BIN / "locust"),
        "--locustfile",
        str(ROOT / "bench" / "locustfile.py"),
        "--headless",
        "--host",
        url,
        "--users",
        str(users),
        "--spawn-rate",
        str(spawn_rate),
        "--run-time",
        f"{seconds}s",
        "--only-summary",
        "--loglevel",
        "WARNING",
    ]
    started = time.monotonic()
    # Locust exits 1 when a request failed; its stats say which, so they are read.
    subprocess.run(
        command,
        cwd=ROOT,
        env={
            **os.environ,
            "YORIK_LOAD_PLAN": str(plan),
            "YORIK_LOAD_STATS": str(stats),
            "YORIK_LOAD_ONLY": only,
        },
        check=False,
    )
    return time.monotonic() - started


def read_stats(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return locust's per-request rows (the total last, named "all") and failures."""
    stats = json.loads(path.read_text())
    rows = []
    for row in stats["rows"]:
        rows.append(
            {
                **row,
                "name": "all" if row["name"] == "Aggregated" else row["name"],
                "error_rate": round(row["failures"] / row["requests"], 5)
                if row["requests"]
                else 0.0,
                "requests_per_s": round(row["requests_per_s"], 1),
                "mean_ms": round(row["mean_ms"], 1),
                "max_ms": round(row["max_ms"] or 0, 1),
            }
        )
    return rows, stats["failures"]


def write_results(result: dict[str, Any]) -> str:
    """Write load.json and load.md; return the Markdown."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "load.json").write_text(
        json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    )
    setup_line = (
        f"{result['revision']}, {result['calls']}: {result['users']} users "
        f"(spawn rate {result['spawn_rate']}/s, no wait "
        f"between calls) for {result['seconds']} s against "
        f"{result['server']} on {result['cores']} cores, "
        f"{result['households']} households, {result['tokens']} API tokens; "
        "production settings, locust on the same machine. "
        f"CPU per call: server {result['cpu_ms_per_call']['server']} ms, "
        f"PostgreSQL {result['cpu_ms_per_call']['postgres']} ms, "
        f"locust {result['cpu_ms_per_call']['locust']} ms. "
        "Percentiles are locust's (rounded to 2 significant digits above 100 ms). "
        f"Load average before {result['load_average_before']}, "
        f"after {result['load_average_after']}."
    )
    lines = [
        setup_line,
        "",
        "| request | requests | failures | error rate | req/s | mean ms | p50 ms "
        "| p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        name = f"**{row['name']}**" if row["name"] == "all" else row["name"]
        lines.append(
            f"| {name} | {row['requests']} | {row['failures']} | "
            f"{row['error_rate']:.2%} | {row['requests_per_s']} | {row['mean_ms']} | "
            f"{row['p50_ms']:g} | {row['p95_ms']:g} | {row['p99_ms']:g} | "
            f"{row['max_ms']} |"
        )
    if result["failures"]:
        lines += ["", "Failures:", ""]
        lines += [
            f"- {f['name']}: {' '.join(f['error'].split())} (x{f['occurrences']})"
            for f in result["failures"]
        ]
    markdown = "\n".join(lines) + "\n"
    (RESULTS / "load.md").write_text(markdown)
    return markdown


def main() -> int:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60, help="run time, ≤ 300")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--spawn-rate", type=float, default=8)
    parser.add_argument("--households", type=int, default=5)
    add_server_arguments(parser)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--profile", action="store_true", help="record the workers with py-spy"
    )
    parser.add_argument("--revision", help="serve this revision's app instead")
    parser.add_argument(
        "--only",
        default="",
        help="only the calls whose task contains this (list_skills: the request "
        "path without a skill)",
    )
    args = parser.parse_args()
    if not 1 <= args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must be between 1 and {MAX_SECONDS}")
    server_defaults(args)

    # As in a real deployment, so WhiteNoise finds its directory.
    call_command("collectstatic", interactive=False, verbosity=0)
    rng = random.Random(args.seed)
    households = import_load_households(count=args.households)
    plan = [
        {
            "slug": household.slug,
            "tokens": (tokens := issue_household_tokens(household=household)),
            "skills_listed": skills_listed(tokens),
            "inputs": collect_inputs(household=household, rng=rng),
        }
        for household in households
    ]
    tokens = sum(len(entry["tokens"]) for entry in plan)

    with (
        tempfile.TemporaryDirectory(prefix="yorik-load-") as scratch,
        checkout_of(args.revision)
        if args.revision
        else contextlib.nullcontext(ROOT) as app,
    ):
        work = Path(scratch)
        plan_file = work / "plan.json"
        plan_file.write_text(json.dumps(plan))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = work / "server.log"
        server = start_server(
            port=port,
            workers=args.workers,
            server=args.server,
            worker_class=args.worker_class,
            threads=args.threads,
            log=log,
            app=app,
        )
        try:
            wait_until_ready(
                server=server, url=url, token=plan[0]["tokens"][0], log=log
            )
            load_before = os.getloadavg()
            profiler = (
                start_profiler(
                    server=server, seconds=args.seconds, output=work / "profile.txt"
                )
                if args.profile
                else None
            )
            postmaster = postmaster_pid()
            cpu_before = {
                "server": cpu_seconds(server.pid),
                "postgres": cpu_seconds(postmaster),
                "locust": ended_children_cpu_seconds(),
            }
            wall = run_locust(
                url=url,
                plan=plan_file,
                users=args.users,
                spawn_rate=args.spawn_rate,
                seconds=args.seconds,
                stats=work / "stats.json",
                only=args.only,
            )
            cpu_after = {
                "server": cpu_seconds(server.pid),
                "postgres": cpu_seconds(postmaster),
                # Of this process's children only locust has ended meanwhile.
                "locust": ended_children_cpu_seconds(),
            }
            load_after = os.getloadavg()
            if profiler is not None:
                profiler.wait()
        finally:
            stop(server)
        rows, failures = read_stats(work / "stats.json")
        server_log = log.read_text()
        if args.profile:
            RESULTS.mkdir(exist_ok=True)
            raw = RESULTS / "load-profile.raw"
            shutil.copyfile(work / "profile.txt", raw)
            (RESULTS / "load-profile.txt").write_text(hottest_functions(raw))

    result = {
        "cores": cores,
        "users": args.users,
        "spawn_rate": args.spawn_rate,
        "seconds": args.seconds,
        "wall_seconds": round(wall, 1),
        "households": len(plan),
        "tokens": tokens,
        "revision": args.revision or "this checkout",
        "calls": f"only {args.only}" if args.only else "the whole mix",
        "server": describe_server(args),
        # Other work on the machine skews the numbers; the load average shows it.
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in load_after],
        # Calls answered, failed ones included: each cost its share.
        "cpu_ms_per_call": {
            name: round(1000 * (cpu_after[name] - cpu_before[name]) / calls, 2)
            if (calls := rows[-1]["requests"])
            else None
            for name in cpu_before
        },
        "rows": rows,
        "failures": failures,
    }
    print(write_results(result))
    if server_log.strip():
        print("server log:\n" + server_log[-4000:])
    total = rows[-1]
    if total["failures"] or not total["requests"]:
        print(f"FAILED: {total['failures']} of {total['requests']} requests failed.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
