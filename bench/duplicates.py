"""Duplicate proposals: how long proposing takes for 1,000 and 10,000 contacts.

    .venv/bin/python bench/duplicates.py [--sizes 1k,10k] [--reps 7]

Each size is a household of bench/generate.py (German and Israeli names with
a long tail, so common names repeat as in a real address book) into which 2 %
planted duplicates are written through the app's own service: a copy with the
same mobile number under a nickname, with a typo in the surname at the same
address, or with the same email. contacts.duplicates.propose_duplicates runs
`--reps` times after one warm-up; reported are p50 and the slowest run, the
number of proposals, how many of the planted pairs were found, and EXPLAIN
(ANALYZE) of the candidate query. The target is interactive: at most 1 s for
10,000 contacts. Results: bench/results/duplicates.{md,json}.
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.django_setup import setup

setup()

from django.db import connection, transaction  # noqa: E402

from bench.generate import ensure_household  # noqa: E402
from contacts import duplicates  # noqa: E402
from contacts.duplicates import propose_duplicates  # noqa: E402
from contacts.models import Contact, ContactStatus  # noqa: E402
from contacts.services import create_contacts  # noqa: E402
from household.models import Household  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = {"1k": 1_000, "10k": 10_000}
PLANTED_SHARE = 0.02


def plant_duplicates(household: Household, *, seed: int) -> None:
    """Write copies of 2 % of the contacts, each noting its original's ref."""
    rng = random.Random(seed)
    originals = list(
        Contact.objects.filter(household=household, kind="person")
        .exclude(status=ContactStatus.SPAM)
        .prefetch_related("channels", "addresses")
        .order_by("pk")
    )
    chosen = rng.sample(originals, int(len(originals) * PLANTED_SHARE))
    rows = []
    for number, original in enumerate(chosen):
        phones = [c for c in original.channels.all() if c.kind == "phone"]
        emails = [c for c in original.channels.all() if c.kind == "email"]
        addresses = list(original.addresses.all())
        ref = f"dup-{seed}-{number}"
        row = {
            "ref": ref,
            "display_name": original.display_name,
            "notes": f"copy of {original.ref}",
        }
        if phones and number % 3 == 0:
            row["display_name"] = original.first_name or "Mama"
            row["channels"] = [{"kind": "phone", "value": phones[0].value}]
        elif emails and number % 3 == 1:
            row["display_name"] = original.display_name.upper()
            row["channels"] = [{"kind": "email", "value": emails[0].value}]
        elif addresses:
            last = original.last_name
            row["display_name"] = f"{original.first_name} {last[:-1]}{last[-1] * 2}"
            address = addresses[0]
            row["addresses"] = [
                {
                    "kind": address.kind,
                    "line1": address.line1,
                    "postcode": address.postcode,
                    "city": address.city,
                }
            ]
        else:
            continue
        rows.append(row)
    create_contacts(household=household, rows=rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def planted_pairs(household: Household) -> set[frozenset[str]]:
    """Return the refs of each planted copy and its original."""
    return {
        frozenset((ref, notes.removeprefix("copy of ")))
        for ref, notes in Contact.objects.filter(
            household=household, ref__startswith="dup-"
        ).values_list("ref", "notes")
    }


def cpu_seconds(backend: int) -> float:
    """Return the CPU seconds this process and its PostgreSQL backend used so far.

    On a machine busy with other work, wall time grows with the load; the CPU
    a call takes does not.
    """
    fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime and stime
    return time.process_time() + ticks / os.sysconf("SC_CLK_TCK")


def measure(label: str, contacts: int, reps: int) -> dict:
    household = ensure_household(f"bench-dup-{label}", contacts=contacts, people=10)
    if not planted_pairs(household):
        plant_duplicates(household, seed=contacts)
    planted = planted_pairs(household)
    propose_duplicates(household=household)  # warm-up
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    times, cpu = [], []
    for _ in range(reps):
        started, cpu_started = time.perf_counter(), cpu_seconds(backend)
        proposals = propose_duplicates(household=household)
        times.append(time.perf_counter() - started)
        cpu.append(cpu_seconds(backend) - cpu_started)
    found = {frozenset((p.first.ref, p.second.ref)) for p in proposals}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "
            + duplicates.candidate_statement(in_one_city=True),
            duplicates.candidate_parameters(household),
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return {
        "size": label,
        "contacts": Contact.objects.filter(household=household).count(),
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        "cpu_p50_ms": round(statistics.median(cpu) * 1000, 1),
        "proposals": len(proposals),
        "load_average": os.getloadavg()[0],
        "planted": len(planted),
        "planted_found": len(planted & found),
        "plan": plan,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k,10k")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    results = [
        measure(label, SIZES[label], args.reps) for label in args.sizes.split(",")
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "duplicates.json").write_text(json.dumps(results, indent=2))
    lines = [
        "| contacts | p50 | slowest | CPU p50 | proposals | planted found "
        "| load average |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        lines.append(
            f"| {result['contacts']:,} | {result['p50_ms']} ms | {result['max_ms']} ms"
            f" | {result['cpu_p50_ms']} ms"
            f" | {result['proposals']} | {result['planted_found']}"
            f" / {result['planted']} | {result['load_average']:.1f} |"
        )
    plans = [f"\n### {r['size']}\n\n```\n{r['plan']}\n```" for r in results]
    (RESULTS / "duplicates.md").write_text("\n".join(lines + plans) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
