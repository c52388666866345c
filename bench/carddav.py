"""CardDAV sync of 1,000 cards against a real Radicale, both ways.

    .venv/bin/python bench/carddav.py              # 1,000 cards
    .venv/bin/python bench/carddav.py --cards 5000

Starts Radicale 3 on a loopback port with a folder of its own (as the tests
do), then measures on the benchmark database:

- pull: a book of N cards (bench/imports.py's phone-export cards) into an
  empty household: the first sync, a no-change re-sync, and a re-sync after
  one card was edited on the server;
- push: a household of N contacts into an empty book: the first sync and a
  no-change re-sync.

Each row gives the seconds, the requests sent and the card bodies
downloaded; a no-change re-sync should download none. Results:
bench/results/carddav.{md,json}.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"


def _household(slug: str) -> Any:
    from household.models import Household

    Household.objects.filter(slug=slug).delete()
    return Household.objects.create(
        slug=slug, name=slug, default_region="DE", language="de"
    )


def _connect(household: Any, phone: Any) -> Any:
    from contacts.carddav.accounts import account_for, check_account, store_account

    book = check_account(url=phone.book, username=phone.user, password=phone.password)
    return store_account(
        account=account_for(household),
        url=phone.book,
        username=phone.user,
        password=phone.password,
        address_book=book,
    )


def _sync(step: str, account: Any) -> dict[str, Any]:
    from contacts.carddav.sync import sync_carddav

    account.refresh_from_db()
    started = time.perf_counter()
    report = sync_carddav(account=account)
    seconds = time.perf_counter() - started
    if report.error:
        raise SystemExit(f"{step}: {report.error}")
    row = {
        "step": step,
        "seconds": round(seconds, 2),
        "requests": report.requests,
        "cards_downloaded": report.cards_downloaded,
        "pulled": report.pulled,
        "pushed": report.pushed,
        "skipped": len(report.skipped),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1_000)
    args = parser.parse_args()

    from bench.django_setup import setup

    # Radicale listens on loopback; a first push of thousands of cards may
    # take longer than a sync is allowed by default.
    os.environ.setdefault("YORIK_CARDDAV_ALLOW_PRIVATE", "1")
    os.environ.setdefault("YORIK_CARDDAV_SYNC_DEADLINE", "3600")
    setup()
    from bench.imports import bundle_of, vcards_of
    from contacts.services import create_contacts
    from tests.contacts.carddav.radicale import Radicale

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        server = Radicale(Path(folder)).start()
        try:
            phone = server.new_user()
            phone.fill([vcards_of(args.cards).decode()])
            account = _connect(_household("bench-carddav-pull"), phone)
            rows.append(_sync(f"pull {args.cards}: first sync", account))
            rows.append(_sync("pull: no-change re-sync", account))
            name = phone.names()[0]
            phone.put(
                name, phone.get(name).replace("END:VCARD", "NOTE:edited\nEND:VCARD")
            )
            rows.append(_sync("pull: one card edited on the server", account))

            household = _household("bench-carddav-push")
            contacts = bundle_of("bench-carddav-push", args.cards)["contacts"]
            create_contacts(household=household, rows=contacts)
            account = _connect(household, server.new_user())
            rows.append(_sync(f"push {args.cards}: first sync", account))
            rows.append(_sync("push: no-change re-sync", account))
        finally:
            server.stop()

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "carddav.json").write_text(json.dumps(rows, indent=2))
    table = [
        "| step | seconds | requests | cards downloaded | pulled | pushed |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {r['step']} | {r['seconds']} | {r['requests']} | "
            f"{r['cards_downloaded']} | {r['pulled']} | {r['pushed']} |"
            for r in rows
        ),
    ]
    (RESULTS / "carddav.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
