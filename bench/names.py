"""Name-quality benchmark: how well similar-name search finds spelling variants.

    .venv/bin/python bench/names.py [--rows 2000] [--seed 7]

Builds a household of leads with German and Israeli names, then asks for
spelling variants (Mayer for Meier, Kohen for Cohen), one-letter typos of full
names, and names that are not there. For each method it reports recall@8 (the
share of wanted rows among the first 8, of at most 8 wanted) and false
positives per query, for the embedding search at several similarity floors,
for pg_trgm similarity of the name words at several thresholds, for both
signals together, and for the similar rows people search shows.
Results: bench/results/names.{md,json}.
"""

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.django_setup import ROOT, setup

setup()


from bench.names_data import (  # noqa: E402
    GERMAN_FIRST,
    GERMAN_LAST,
    ISRAELI_FIRST,
    ISRAELI_LAST,
    UNKNOWN_NAMES,
    VARIANT_FAMILIES,
)
from household.models import Household, Lead, LeadAccess  # noqa: E402
from household.services import create_lead, create_member  # noqa: E402
from people_search.engine.similar import (  # noqa: E402
    SIMILARITY_FLOOR,
    TRIGRAM_FLOOR,
    find_similar_names,
)
from people_search.engine.text import fold_name  # noqa: E402
from people_search.selectors import search_people  # noqa: E402

FLOORS = [0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70]
THRESHOLDS = [0.30, 0.40, 0.50, 0.60, 0.70]


@dataclass
class Case:
    query: str
    wanted: set[int]
    kind: str


@dataclass
class Score:
    recall: list[float] = field(default_factory=list)
    false_hits: list[int] = field(default_factory=list)
    negative_rows: list[int] = field(default_factory=list)

    def add(
        self, case: Case, found: list[int], literal: set[int], *, exclude_literal: bool
    ) -> None:
        """Score the first 8 rows; similar-only methods skip what text finds."""
        if exclude_literal:
            found = [pk for pk in found if pk not in literal]
        top = found[:8]
        if case.wanted:
            hits = len(case.wanted & set(top))
            self.recall.append(hits / min(len(case.wanted), 8))
            self.false_hits.append(len(set(top) - case.wanted - literal))
        else:
            self.negative_rows.append(len(set(top) - literal))

    def row(self, name: str) -> dict:
        return {
            "method": name,
            "recall@8": round(sum(self.recall) / len(self.recall), 3),
            "false hits/query": round(sum(self.false_hits) / len(self.false_hits), 2),
            "rows for unknown names": round(
                sum(self.negative_rows) / len(self.negative_rows), 2
            ),
            "unknown names with no row": round(
                sum(1 for n in self.negative_rows if n == 0) / len(self.negative_rows),
                3,
            ),
        }


def build_household(rows: int, rng: random.Random) -> tuple[Household, dict[int, str]]:
    Household.objects.filter(slug="bench-names").delete()
    household = Household.objects.create(
        slug="bench-names", name="Bench names", default_region="DE", language="de"
    )
    actor = create_member(
        household=household, username="bench-names-actor", role="admin"
    )
    names: dict[int, str] = {}
    families = [spelling for family in VARIANT_FAMILIES for spelling in family[:2]]
    for index in range(rows):
        if index < len(families) * 2:
            # Two people for the first two spellings of every family.
            last = families[index // 2]
            first = rng.choice(GERMAN_FIRST + ISRAELI_FIRST)
        elif rng.random() < 0.6:
            first, last = rng.choice(GERMAN_FIRST), rng.choice(GERMAN_LAST)
        else:
            first, last = rng.choice(ISRAELI_FIRST), rng.choice(ISRAELI_LAST)
        lead = create_lead(household=household, first_name=first, last_name=last)
        names[lead.pk] = f"{first} {last}"
    actor.lead_access = LeadAccess.ALL
    actor.save()
    return household, names


def typo(word: str, rng: random.Random) -> str:
    position = rng.randrange(1, len(word) - 1)
    edit = rng.choice(["swap", "drop", "double"])
    if edit == "swap":
        return (
            word[:position] + word[position + 1] + word[position] + word[position + 2 :]
        )
    if edit == "drop":
        return word[:position] + word[position + 1 :]
    return word[:position] + word[position] + word[position:]


def build_cases(names: dict[int, str], rng: random.Random) -> list[Case]:
    words = {pk: set(fold_name(name).split()) for pk, name in names.items()}
    cases = []
    for family in VARIANT_FAMILIES:
        for spelling in family:
            others = {fold_name(s) for s in family} - {fold_name(spelling)}
            wanted = {pk for pk, w in words.items() if w & others}
            if wanted:
                cases.append(Case(spelling, wanted, "variant"))
    for pk in rng.sample(sorted(names), 60):
        first, last = names[pk].split(" ", 1)
        if len(last) >= 4:
            cases.append(Case(f"{first} {typo(last, rng)}", {pk}, "typo"))
    cases += [Case(name, set(), "unknown") for name in UNKNOWN_NAMES]
    return cases


def literal_ids(household: Household, query: str) -> set[int]:
    terms = fold_name(query).split()
    leads = Lead.objects.filter(household=household)
    for term in terms:
        leads = leads.filter(search_text__contains=term)
    return set(leads.values_list("pk", flat=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    household, names = build_household(args.rows, rng)
    cases = build_cases(names, rng)
    actor = household.memberships.get()
    scores: dict[str, Score] = {}
    for case in cases:
        literal = literal_ids(household, case.query)
        never = 2.0  # A floor no similarity reaches: that signal is off.
        for floor in FLOORS:
            found = find_similar_names(
                household_id=household.pk,
                name=case.query,
                subjects=["lead"],
                floor=floor,
                trigram_floor=never,
            )
            scores.setdefault(f"embedding ≥ {floor:.2f}", Score()).add(
                case, [c.subject_id for c in found], literal, exclude_literal=True
            )
        for threshold in THRESHOLDS:
            found = find_similar_names(
                household_id=household.pk,
                name=case.query,
                subjects=["lead"],
                floor=never,
                trigram_floor=threshold,
            )
            scores.setdefault(f"pg_trgm similarity ≥ {threshold:.2f}", Score()).add(
                case, [c.subject_id for c in found], literal, exclude_literal=True
            )
        for threshold in THRESHOLDS:
            found = find_similar_names(
                household_id=household.pk,
                name=case.query,
                subjects=["lead"],
                trigram_floor=threshold,
            )
            scores.setdefault(
                f"embedding ≥ {SIMILARITY_FLOOR:.2f} or pg_trgm ≥ {threshold:.2f}",
                Score(),
            ).add(case, [c.subject_id for c in found], literal, exclude_literal=True)
        result = search_people(household=household, actor=actor, query=case.query)
        # What people search shows beside the literal matches it lists first,
        # ordered by name as the product orders them.
        scores.setdefault(
            f"people search (embedding ≥ {SIMILARITY_FLOOR:.2f} or pg_trgm ≥ "
            f"{TRIGRAM_FLOOR:.2f}), similar rows by name",
            Score(),
        ).add(
            case,
            [row["lead_id"] for row in result.leads],
            literal,
            exclude_literal=True,
        )
    table = [score.row(name) for name, score in scores.items()]
    counts = {
        kind: sum(1 for c in cases if c.kind == kind)
        for kind in ("variant", "typo", "unknown")
    }
    header = (
        f"{len(names)} leads; {counts['variant']} spelling-variant queries, "
        f"{counts['typo']} typo queries, {counts['unknown']} unknown names."
    )
    lines = [
        header,
        "",
        "| " + " | ".join(table[0]) + " |",
        "|---" * len(table[0]) + "|",
    ]
    lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in table]
    output = "\n".join(lines)
    print(output)
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "names.md").write_text(output + "\n")
    (results / "names.json").write_text(
        json.dumps({"summary": header, "rows": table}, indent=2) + "\n"
    )
    Household.objects.filter(slug="bench-names").delete()


if __name__ == "__main__":
    main()
