"""Bytes the model reads for a descriptor, before and after a pick teaches it.

    .venv/bin/python bench/learning.py [--size 1k] [--query "meine Patentante"]

Replays the spec's descriptor flow as the admin of bench/run.py's household
of that size (1,000 contacts by default; generated once, then reused),
in-process through the agent API: the first ask finds nobody by the
descriptor (find_person → 0 rows), so the assistant lists the address book
(list_contacts_for_picking, defer_card), ranks ten guesses on a card
(ranked_picks), the person picks the first on the card's page and the
assistant reads the pick back (GET /api/cards/<id>/). The second ask of the
same descriptor is one find_person call, answered by what the pick taught.
The undo then forgets the lesson, and the same ask finds nobody again: what
every ask cost before picks taught. Bytes are the JSON bodies the model gets;
printed and written to bench/results/learning.md. The goal: the second ask
under 2 KB.
"""

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# bench.run sets the production environment and starts Django on the bench data.
from bench.run import RESULTS, SIZES, Skills, ensure_household

# isort: split
import json

from django.core.management import call_command
from django.test import Client

from contacts.models import Contact, ContactKind
from people_search.models import PersonalWord

GOAL_BYTES = 2048


def pick_on_card(url: str, contact_id: int) -> None:
    """Pick the contact through the card's signed link, as the person does."""
    parts = urlsplit(url)
    token = parts.query.removeprefix("t=")
    response = Client().post(
        f"{parts.path}pick/", {"contact_id": contact_id, "t": token}
    )
    assert response.status_code == 302, response.content[:500]


def undo_on_card(url: str) -> None:
    """Forget what the pick taught, with the card page's undo button."""
    parts = urlsplit(url)
    token = parts.query.removeprefix("t=")
    response = Client().post(f"{parts.path}forget/", {"t": token})
    assert response.status_code == 302, response.content[:500]


def ask(skills: Skills, query: str) -> tuple[list[tuple[str, int]], dict]:
    """Ask find_person for the descriptor; return (step, bytes) and its answer."""
    body = skills.api("find_person", {"query": query, "source": "contacts"})
    return [("find_person", len(body))], json.loads(body)


def first_ask(
    skills: Skills, query: str, guesses: list[int]
) -> tuple[list[tuple[str, int]], str]:
    """Run the descriptor flow when find_person finds nobody; return its steps
    and the card's link."""
    steps, answer = ask(skills, query)
    assert answer["count"] == 0, f"{query!r} finds {answer['count']}: pick another"
    dump = skills.api("list_contacts_for_picking", {"defer_card": True})
    steps.append(("list_contacts_for_picking (browse dump)", len(dump)))
    ranked = skills.api(
        "list_contacts_for_picking",
        {
            "query": query,
            "ranked_picks": [
                {"id": pk, "confidence": 0.9 - index * 0.05, "reason": "Rank"}
                for index, pk in enumerate(guesses)
            ],
        },
    )
    steps.append(("list_contacts_for_picking (ranked card)", len(ranked)))
    card = json.loads(ranked)["card"]
    pick_on_card(card["url"], guesses[0])
    read_back = skills.client.get(
        f"/api/cards/{card['id']}/", HTTP_AUTHORIZATION=f"Bearer {skills.token}"
    )
    assert read_back.status_code == 200
    steps.append(("GET /api/cards/<id>/ (the pick)", len(read_back.content)))
    return steps, card["url"]


def table(title: str, steps: list[tuple[str, int]]) -> list[str]:
    lines = [f"{title}:", *(f"  {step:<44} {size:>7,} B" for step, size in steps)]
    lines.append(f"  {'total':<44} {sum(size for _, size in steps):>7,} B")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=SIZES, default="1k")
    parser.add_argument("--query", default="meine Patentante")
    args = parser.parse_args()
    size = SIZES[args.size]
    # The production settings serve static files from their manifest.
    call_command("collectstatic", interactive=False, verbosity=0)
    household = ensure_household(
        f"bench-{args.size}", contacts=size, people=size, seed=1
    )
    skills = Skills(household)
    PersonalWord.objects.filter(household=household, member=skills.membership).delete()
    guesses = list(
        Contact.objects.filter(household=household, kind=ContactKind.PERSON)
        .order_by("pk")
        .values_list("pk", flat=True)[:10]
    )

    first, card_url = first_ask(skills, args.query, guesses)
    second, answer = ask(skills, args.query)
    learned = answer["results"][0]
    assert (learned["id"], learned["match"]) == (guesses[0], "learned"), learned
    undo_on_card(card_url)
    _, forgotten = ask(skills, args.query)
    assert forgotten["count"] == 0, "The undo left the lesson."

    size = sum(bytes_ for _, bytes_ in second)
    lines = [
        f"Descriptor {args.query!r}, {household.contacts.count():,} contacts "
        f"({args.size}), as {skills.membership.profile.username}",
        *table("First ask: nothing learned (every ask, before picks taught)", first),
        *table("Second ask: the pick taught the word", second),
        "After the undo the same ask finds nobody again (count 0).",
        f"Goal: second ask under {GOAL_BYTES:,} B: "
        f"{'met' if size < GOAL_BYTES else 'MISSED'} "
        f"({size / sum(b for _, b in first):.1%} of the first ask)",
    ]
    report = "\n".join(lines)
    print(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "learning.md").write_text(f"```\n{report}\n```\n")


if __name__ == "__main__":
    main()
