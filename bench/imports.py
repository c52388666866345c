"""Import speed: household bundles of 1k, 10k and 50k contacts, a vCard file,
and the Paperless mirror's and iCalendar import's writes at growing sizes.

    .venv/bin/python bench/imports.py                   # 1k, 10k, 50k; 5,000 cards;
                                                        # 1k, 5k, 20k documents, events
    .venv/bin/python bench/imports.py --sizes 1k,10k --cards 1000 --syncs 1000,5000
    .venv/bin/python bench/imports.py --sizes 50k --cards 0 --syncs "" --no-analysis

Each bundle holds one admin, a few leads and N contacts with German and
Israeli names (bench/generate.py's Faker), a phone, an email and a home
address each. It is imported with yorik.bundles.import_household into the
benchmark database, replacing the household of the same slug; the import
commits, so the names are embedded for real (offline provider) on commit.
A vCard 3.0 file of `--cards` cards of the same kind is then imported into an
empty household with contacts.vcard.importer.import_vcards.

Each import runs in a fresh child process, so its peak memory (ru_maxrss) is
its own. Reported: seconds to validate and write (until the commit), for the
on-commit work (embedding names, analysing the tables the import filled),
contacts or cards per second overall, SQL
statements per contact (counted by an execute wrapper, which the one COPY of
the contacts passes by), peak memory, and the CPU seconds the import took in
this process and in its PostgreSQL backend: on a machine shared with other
work, contacts per CPU second moves less than contacts per second. A rate
that falls as N grows would reveal a step worse than linear.

Right after each bundle import, two find_person questions (by a contact's
phone channel, and one term: a contact's last name) are timed in process,
QUERY_CALLS calls each over QUERY_INPUTS inputs, then again after a manual
`ANALYZE` of the whole database: the first p50 over the second shows
whether the import left the planner statistics as good as ANALYZE's.
`--no-analysis` shows what the questions cost when an import leaves its
tables unanalysed until autovacuum comes round.

The Paperless mirror (`contacts.paperless.sync.write_paperless_mirror`, what
`sync_paperless` writes once it has read the server) and `import_ics` are
each run at `--syncs` sizes, twice: a first sync or import of N new
documents (with N / 10 correspondents) or events, then the same N with every
title or summary changed, which updates every row. Each rate is rows per
second; again a rate that falls as N grows would reveal a step worse than
linear. Results: bench/results/imports.{md,json}.
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"
SIZES = {"1k": 1_000, "10k": 10_000, "50k": 50_000}
CARDS = 5_000
SYNCS = "1000,5000,20000"
LEADS = 20
SEED = 1
# Calls of each question after an import, cycling through its inputs.
QUERY_CALLS = 40
QUERY_INPUTS = 20


def _rss_mb() -> float:
    """Return this process's resident memory now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Cpu:
    """CPU seconds used by this process and by its database backend."""

    def __init__(self) -> None:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.backend = Path(f"/proc/{cursor.fetchone()[0]}/stat")
        self.started = self._now()

    def _backend_seconds(self) -> float | None:
        """Return the backend's user + system time; None when it runs elsewhere."""
        try:
            fields = self.backend.read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _now(self) -> tuple[float, float | None]:
        return time.process_time(), self._backend_seconds()

    def used(self) -> dict[str, float | None]:
        (python, backend), (python_0, backend_0) = self._now(), self.started
        return {
            "cpu_python_s": round(python - python_0, 2),
            "cpu_db_s": None if backend is None else round(backend - backend_0, 2),
        }


def bundle_of(slug: str, contacts: int, *, seed: int = SEED) -> dict[str, Any]:
    """Return a bundle of `contacts` contacts: a phone, an email, an address each."""
    from bench.generate import Faker

    faker = Faker(random.Random(seed))
    rows = []
    for index in range(contacts):
        person = faker.person()
        rows.append(
            {
                "ref": f"c{index}",
                "display_name": f"{person.first} {person.last}",
                "first_name": person.first,
                "last_name": person.last,
                "channels": [
                    {
                        "kind": "phone",
                        "value": faker.phone(person.israeli),
                        "label": "mobil",
                    },
                    {"kind": "email", "value": faker.email(person), "label": ""},
                ],
                "addresses": [faker.address(person.israeli, "home")],
            }
        )
    leads = []
    for _ in range(LEADS):
        person = faker.person()
        leads.append(
            {
                "first_name": person.first,
                "last_name": person.last,
                "email": faker.email(person),
                "phone": faker.phone(person.israeli),
            }
        )
    return {
        "format": "yorik.household/1",
        "household": {"slug": slug, "name": f"Import bench {contacts}"},
        "people": [{"username": f"{slug}-admin", "role": "admin"}],
        "contacts": rows,
        "leads": [{**lead, "owner": f"{slug}-admin"} for lead in leads],
    }


def vcards_of(cards: int, *, seed: int = SEED) -> bytes:
    """Return a vCard 3.0 file of `cards` people, as a phone's export writes them."""
    from bench.generate import Faker

    faker = Faker(random.Random(seed))
    lines = []
    for index in range(cards):
        person = faker.person()
        address = faker.address(person.israeli, "home")
        lines += [
            "BEGIN:VCARD",
            "VERSION:3.0",
            f"UID:bench-{seed}-{index}",
            f"FN:{person.first} {person.last}",
            f"N:{person.last};{person.first};;;",
            f"TEL;TYPE=CELL:{faker.phone(person.israeli)}",
            f"EMAIL;TYPE=HOME:{faker.email(person)}",
            "ADR;TYPE=HOME:;{line2};{line1};{city};;{postcode};{country}".format(
                **address
            ),
            "END:VCARD",
        ]
    return ("\r\n".join(lines) + "\r\n").encode()


class _Statements:
    """Count the SQL statements run on the connection, cheaply."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def measure_bundle(contacts: int) -> dict[str, Any]:
    """Import a bundle of `contacts` contacts; return what it took."""
    from django.db import connection, transaction

    from bench.generate import delete_household
    from people_search.index.models import NameWordUse
    from yorik.bundles import import_household

    slug = f"bench-import-{contacts}"
    delete_household(slug)
    bundle = bundle_of(slug, contacts)
    rss_before = _rss_mb()
    statements = _Statements()
    cpu = _Cpu()
    with connection.execute_wrapper(statements):
        started = time.perf_counter()
        with transaction.atomic():
            household = import_household(bundle=bundle)
            written = time.perf_counter()
            write_statements = statements.count
        # The on-commit work, embedding every new name, ran as the block left.
        indexed = time.perf_counter()
    used = cpu.used()
    uses = NameWordUse.objects.filter(household=household, subject="contact")
    assert uses.values("subject_id").distinct().count() == contacts, "not indexed"
    assert household.contacts.count() == contacts
    first_queries = measure_first_queries(household, bundle["contacts"])
    return {
        "contacts": contacts,
        "write_s": round(written - started, 2),
        "index_s": round(indexed - written, 2),
        "total_s": round(indexed - started, 2),
        "contacts_per_s": round(contacts / (indexed - started)),
        **used,
        "contacts_per_cpu_s": _per_cpu_second(contacts, used),
        "statements": statements.count,
        "write_statements": write_statements,
        "statements_per_contact": round(statements.count / contacts, 3),
        "rss_before_mb": round(rss_before),
        "peak_mb": round(_peak_mb()),
        "first_queries": first_queries,
    }


def measure_first_queries(
    household: Any, contacts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Time find_person right after the import and again after a manual ANALYZE."""
    from django.db import connection

    from bench.run import Skills, measure

    skills = Skills(household)
    sample = random.Random(SEED).sample(contacts, min(QUERY_INPUTS, len(contacts)))
    questions = {
        "find_person by phone channel": [
            {
                "source": "contacts",
                "channel_kind": "phone",
                "channel_value": contact["channels"][0]["value"],
            }
            for contact in sample
        ],
        "find_person by one name term": [
            {"query": contact["last_name"]} for contact in sample
        ],
    }

    def timed() -> dict[str, float]:
        return {
            question: measure(
                lambda inputs: skills.direct("find_person", inputs), inputs, QUERY_CALLS
            ).p50
            for question, inputs in questions.items()
        }

    right_after = timed()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    analysed = timed()
    return [
        {
            "question": question,
            "right_after_p50_ms": round(right_after[question], 1),
            "after_analyze_p50_ms": round(analysed[question], 1),
            "ratio": round(right_after[question] / analysed[question], 2),
        }
        for question in questions
    ]


def measure_vcards(cards: int) -> dict[str, Any]:
    """Import a vCard file of `cards` new cards; return what it took."""
    from django.db import connection

    from bench.generate import delete_household
    from contacts.vcard.importer import import_vcards
    from household.models import Household

    slug = f"bench-vcard-{cards}"
    delete_household(slug)
    household = Household.objects.create(slug=slug, name=f"vCard bench {cards}")
    data = vcards_of(cards)
    rss_before = _rss_mb()
    statements = _Statements()
    cpu = _Cpu()
    with connection.execute_wrapper(statements):
        started = time.perf_counter()
        summary = import_vcards(household=household, data=data)
        finished = time.perf_counter()
    used = cpu.used()
    assert summary.created == cards, str(summary)
    return {
        "cards": cards,
        "total_s": round(finished - started, 2),
        "cards_per_s": round(cards / (finished - started)),
        **used,
        "cards_per_cpu_s": _per_cpu_second(cards, used),
        "statements": statements.count,
        "statements_per_card": round(statements.count / cards, 3),
        "rss_before_mb": round(rss_before),
        "peak_mb": round(_peak_mb()),
        "summary": str(summary),
    }


def paperless_of(
    documents: int, *, edition: int, seed: int = SEED
) -> tuple[list[Any], list[Any]]:
    """Return a Paperless server's correspondents and documents: one
    correspondent for every ten documents, titles of this `edition`."""
    from bench.generate import Faker
    from contacts.paperless.client import Correspondent, Document

    faker = Faker(random.Random(seed))
    correspondents = []
    for index in range(max(1, documents // 10)):
        person = faker.person()
        correspondents.append(
            Correspondent(paperless_id=index + 1, name=f"Praxis {person.last}")
        )
    rng = random.Random(seed)
    return correspondents, [
        Document(
            paperless_id=index + 1,
            title=f"Rechnung {index + 1} ({edition})",
            correspondent_id=rng.choice(correspondents).paperless_id,
            created=date(2020, 1, 1) + timedelta(days=index % 2000),
        )
        for index in range(documents)
    ]


def events_of(events: int, *, edition: int, seed: int = SEED) -> bytes:
    """Return an iCalendar file of `events` single events, summaries of this
    `edition`."""
    from bench.generate import Faker

    faker = Faker(random.Random(seed))
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Yorik bench//EN"]
    for index in range(events):
        person = faker.person()
        start = datetime(2020, 1, 1, 9, tzinfo=UTC) + timedelta(
            days=index % 2000, hours=index % 8
        )
        lines += [
            "BEGIN:VEVENT",
            f"UID:bench-{seed}-{index}@yorik.invalid",
            f"DTSTAMP:{start:%Y%m%dT%H%M%S}Z",
            f"DTSTART:{start:%Y%m%dT%H%M%S}Z",
            f"DTEND:{start + timedelta(hours=1):%Y%m%dT%H%M%S}Z",
            f"SUMMARY:Termin bei {person.first} {person.last} ({edition})",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return ("\r\n".join(lines) + "\r\n").encode()


def measure_sync(kind: str, rows: int) -> dict[str, Any]:
    """Write `rows` new Paperless documents or calendar events into an empty
    household, then the same rows with every title changed; return the rates."""
    from bench.generate import delete_household
    from contacts.paperless.sync import write_paperless_mirror
    from household.icalendar_import import import_ics
    from household.models import Household

    slug = f"bench-{kind}-{rows}"
    delete_household(slug)
    household = Household.objects.create(slug=slug, name=f"{kind} bench {rows}")
    timings = []
    for edition in (1, 2):
        if kind == "paperless":
            correspondents, documents = paperless_of(rows, edition=edition)
            started = time.perf_counter()
            report = write_paperless_mirror(
                household=household, correspondents=correspondents, documents=documents
            )
            counts = report.documents
        else:
            data = events_of(rows, edition=edition)
            started = time.perf_counter()
            counts = import_ics(household=household, data=data)
        timings.append(time.perf_counter() - started)
        written = counts.created if edition == 1 else counts.updated
        assert written == rows, f"{kind} edition {edition}: {counts}"
    delete_household(slug)
    first, changed = timings
    return {
        "kind": kind,
        "rows": rows,
        "first_s": round(first, 2),
        "first_per_s": round(rows / first),
        "changed_s": round(changed, 2),
        "changed_per_s": round(rows / changed),
    }


def _per_cpu_second(rows: int, used: dict[str, float | None]) -> int | None:
    if used["cpu_db_s"] is None:
        return None
    return round(rows / (used["cpu_python_s"] + used["cpu_db_s"]))


def child(kind: str, size: int, *, analysis: bool) -> None:
    """Run one measurement in this process and print it as JSON.

    Without `analysis`, imports leave their tables as autovacuum finds them.
    """
    from bench.django_setup import setup
    from yorik import statistics

    setup()
    if not analysis:
        statistics.analyze_changed_tables = lambda tables, **where: []
    if kind == "bundle":
        result = measure_bundle(size)
    elif kind == "vcard":
        result = measure_vcards(size)
    else:
        result = measure_sync(kind, size)
    print(json.dumps(result))


def run_child(kind: str, size: int, *, analysis: bool = True) -> dict[str, Any]:
    answer = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            kind,
            str(size),
            *([] if analysis else ["--no-analysis"]),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(answer.stdout.strip().splitlines()[-1])


def report(
    bundles: list[dict[str, Any]],
    vcards: list[dict[str, Any]],
    syncs: list[dict[str, Any]],
    *,
    analysis: bool = True,
) -> str:
    lines = ["## Household bundle import", ""]
    if bundles:
        lines += [
            "| contacts | write s | on commit s | total s | contacts/s | CPU s "
            "(Python + DB) | contacts/CPU s | statements | per contact | peak MB |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['contacts']:,} | {r['write_s']} | {r['index_s']} | {r['total_s']} "
            f"| **{r['contacts_per_s']:,}** | {r['cpu_python_s']} + {r['cpu_db_s']} "
            f"| {r['contacts_per_cpu_s']} | {r['statements']:,} "
            f"| {r['statements_per_contact']} | {r['peak_mb']} |"
            for r in bundles
        ]
        lines += [
            "",
            "## find_person right after the import"
            + ("" if analysis else " (its tables left unanalysed)"),
            "",
            "| contacts | question | p50 right after, ms | p50 after ANALYZE, ms "
            "| ratio |",
            "|---:|---|---:|---:|---:|",
        ]
        lines += [
            f"| {r['contacts']:,} | {q['question']} | {q['right_after_p50_ms']} "
            f"| {q['after_analyze_p50_ms']} | **{q['ratio']}** |"
            for r in bundles
            for q in r["first_queries"]
        ]
    lines += ["", "## vCard import", ""]
    if vcards:
        lines += [
            "| cards | total s | cards/s | CPU s (Python + DB) | cards/CPU s "
            "| statements | per card | peak MB |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['cards']:,} | {r['total_s']} | **{r['cards_per_s']:,}** "
            f"| {r['cpu_python_s']} + {r['cpu_db_s']} | {r['cards_per_cpu_s']} "
            f"| {r['statements']:,} | {r['statements_per_card']} | {r['peak_mb']} |"
            for r in vcards
        ]
    if syncs:
        lines += [
            "",
            "## Paperless mirror and iCalendar import",
            "",
            "| writes | rows | first: s | rows/s | every row changed: s | rows/s |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        names = {
            "paperless": "Paperless documents",
            "ics": "iCalendar events",
        }
        lines += [
            f"| {names[r['kind']]} | {r['rows']:,} | {r['first_s']} "
            f"| **{r['first_per_s']:,}** | {r['changed_s']} "
            f"| **{r['changed_per_s']:,}** |"
            for r in syncs
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="1k,10k,50k", help="bundle sizes: 1k, 10k, 50k or numbers"
    )
    parser.add_argument("--cards", type=int, default=CARDS, help="0 skips vCards")
    parser.add_argument(
        "--syncs",
        default=SYNCS,
        help="Paperless documents and calendar events per run; empty skips them",
    )
    parser.add_argument(
        "--no-analysis",
        dest="analysis",
        action="store_false",
        help="bundle imports leave their tables unanalysed, as before autovacuum",
    )
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SIZE"), help="internal")
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), analysis=args.analysis)
        return
    sizes = [SIZES.get(size) or int(size) for size in args.sizes.split(",") if size]
    bundles, vcards = [], []
    for size in sizes:
        bundles.append(run_child("bundle", size, analysis=args.analysis))
        print(json.dumps(bundles[-1]), flush=True)
    if args.cards:
        vcards.append(run_child("vcard", args.cards))
        print(json.dumps(vcards[-1]), flush=True)
    syncs = []
    for kind in ("paperless", "ics"):
        for rows in [int(rows) for rows in args.syncs.split(",") if rows]:
            syncs.append(run_child(kind, rows))
            print(json.dumps(syncs[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "imports.json").write_text(
        json.dumps({"bundles": bundles, "vcards": vcards, "syncs": syncs}, indent=2)
    )
    table = report(bundles, vcards, syncs, analysis=args.analysis)
    (RESULTS / "imports.md").write_text(table)
    print()
    print(table)


if __name__ == "__main__":
    main()
