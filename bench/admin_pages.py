"""Admin pages at size: time and weigh every page a household admin opens.

    .venv/bin/python bench/admin_pages.py [--size 50k] [--reps 3] [--only TEXT]

Django admin as the household admin of bench/run.py's household of that size
(50,000 contacts and 50,000 people by default; generated once, then reused),
in-process through Django's test client with the production settings: every
registered model's change list, add page and the change page of its first
row, the change lists as they are searched and filtered, the possible
duplicates, and the requests of issue 33 (a regular expression in a URL
filter, a year out of range, a 14 KB search) under the statement timeout
requests have (10 s). Each page is asked `--reps` times after one warm-up;
printed and written to bench/results/admin_pages.md are its status, size, SQL
statements, the best and slowest time, and the least CPU this process and its
PostgreSQL backend spent on it (from /proc, as bench/duplicates.py reads it:
on a busy machine wall time grows, CPU does not). The goal: every page under
1 s.
"""

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# bench.run sets the production environment and starts Django on the bench data.
from bench.run import RESULTS, SIZES, ensure_household

# isort: split
from bench.duplicates import cpu_seconds

# isort: split
from django.apps import apps
from django.contrib import admin
from django.core.management import call_command
from django.db import connection
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from household.models import Household, Membership

GOAL_MS = 1000
# A search term of the size that made a 70 MB page.
LONG_SEARCH = "Müller " * 2000


def household_rows(household: Household, model: type[Model]) -> Model | None:
    """Return the household's first row of a model, if it has one."""
    if model is Household:
        return household
    if not any(field.name == "household" for field in model._meta.get_fields()):
        return None
    return model._default_manager.filter(household=household).order_by("pk").first()


def admin_url(model: type[Model], view: str, *args: object) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


def pages(household: Household) -> list[tuple[str, str]]:
    """Return (name, URL) of every page to time."""
    found = [("index", reverse("admin:index"))]
    for model in apps.get_models():
        if not admin.site.is_registered(model):
            continue
        label = model._meta.label_lower
        if model._meta.app_label == "auth" or label == "yorik.card":
            continue  # Superusers' models: a household admin gets 403.
        found.append((f"{label} list", admin_url(model, "changelist")))
        found.append((f"{label} add", admin_url(model, "add")))
        row = household_rows(household, model)
        if row is not None:
            found.append((f"{label} change", admin_url(model, "change", row.pk)))
    contacts = admin_url(apps.get_model("contacts.contact"), "changelist")
    leads = admin_url(apps.get_model("household.lead"), "changelist")
    events = admin_url(apps.get_model("household.calendarevent"), "changelist")
    found += [
        ("contact list, search Müller", f"{contacts}?q=M%C3%BCller"),
        ("contact list, page 100", f"{contacts}?p=100"),
        ("contact list, status active", f"{contacts}?status__exact=active"),
        ("lead list, search Cohen", f"{leads}?q=Cohen"),
        ("lead list, status new", f"{leads}?status__exact=new"),
        ("event list, year 2025", f"{events}?starts_at__year=2025"),
        ("possible duplicates", reverse("admin:contacts_contact_duplicates")),
        (
            "possible duplicates, page 3",
            reverse("admin:contacts_contact_duplicates") + "?p=3",
        ),
        (
            "contact list, notes__regex backtracking",
            f"{contacts}?notes__regex=(.*)(.*)(.*)(.*)(.*)(.*)%5C6%5C5%5C4%5C3%5C2%5C1x",
        ),
        ("contact list, notes__regex=(", f"{contacts}?notes__regex=("),
        ("event list, year 99999999999", f"{events}?starts_at__year=99999999999"),
        ("lead list, 14 KB search", f"{leads}?q={LONG_SEARCH}"),
    ]
    return found


def measure(client: Client, url: str, reps: int) -> dict[str, Any]:
    """Ask for a page once to warm up, then reps times; return what it cost."""
    response = client.get(url)
    times = []
    statements = []

    def count(
        execute: Callable[..., Any],
        sql: str,
        params: Any,
        many: bool,
        context: dict[str, Any],
    ) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    cpu = []
    for _ in range(reps):
        statements.clear()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        with connection.execute_wrapper(count):
            started, cpu_started = time.perf_counter(), cpu_seconds(backend)
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((cpu_seconds(backend) - cpu_started) * 1000)
    return {
        "status": response.status_code,
        "bytes": len(response.content),
        "queries": len(statements),
        "best_ms": min(times),
        "worst_ms": max(times),
        "cpu_ms": min(cpu),
    }


def markdown(label: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"Admin pages of the {label} household as its admin, in-process "
        f"(goal: under {GOAL_MS} ms).",
        "",
        "| page | status | KB | SQL | best ms | slowest ms | CPU ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        flag = " ⚠" if row["worst_ms"] >= GOAL_MS else ""
        lines.append(
            f"| {row['page']} | {row['status']} | {row['bytes'] / 1024:,.1f} | "
            f"{row['queries']} | {row['best_ms']:,.0f} | "
            f"{row['worst_ms']:,.0f}{flag} | {row['cpu_ms']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="50k", choices=SIZES)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="pages whose name contains this")
    args = parser.parse_args()
    size = SIZES[args.size]
    # The production settings serve static files from their manifest.
    call_command("collectstatic", interactive=False, verbosity=0)
    household = ensure_household(
        f"bench-{args.size}", contacts=size, people=size, seed=args.seed
    )
    admin_membership = Membership.objects.select_related("profile__user").get(
        household=household, profile__username=f"{household.slug}-admin"
    )
    # The statement timeout requests have (bench.django_setup sets none).
    connection.settings_dict["OPTIONS"]["options"] += " -c statement_timeout=10000"
    connection.close()
    client = Client(raise_request_exception=False)
    client.force_login(admin_membership.profile.user)
    rows = []
    for name, url in pages(household):
        if args.only not in name:
            continue
        row = {"page": name, **measure(client, url, args.reps)}
        rows.append(row)
        print(
            f"{name}: {row['status']}, {row['bytes'] / 1024:,.1f} KB, "
            f"{row['queries']} SQL, {row['best_ms']:,.0f} to {row['worst_ms']:,.0f} ms",
            flush=True,
        )
    report = markdown(args.size, rows)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "admin_pages.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
