"""Given names and the nicknames, short forms and variants people use for them.

English pairs come from the `nicknames` package (hand-curated, Apache-2.0):
"Bob" for Robert, "Liz" for Elizabeth. German ones ("Sepp" for Josef,
"Uschi" for Ursula, "Stephan" beside "Stefan") are curated in
german_nicknames.csv beside this module, which names its source. Both are
read both ways and on folded words, so "Jürgen" and "Juergen" look alike.
"""

import csv
from functools import cache
from pathlib import Path

from nicknames import NickNamer

from people_search.engine.text import fold_name, name_words

GERMAN_NICKNAMES = Path(__file__).with_name("german_nicknames.csv")


def name_variants(word: str) -> frozenset[str]:
    """Return the folded names a folded given name is a nickname of, or has as one."""
    return _variants().get(fold_name(word), frozenset())


def names_agree(one: str, other: str) -> bool:
    """Return whether two names can name the same person.

    They agree when their folded words are the same in any order, or when
    the family names (last words) are equal and the given names (first
    words) are equal, nicknames of each other or an initial of the other.
    A one-word name agrees with a name whose given name it matches that way
    ("Hans" and "Hans Becker"). "Gisela Becker" and "Hans Becker" disagree.
    """
    first, second = name_words(one), name_words(other)
    if not first or not second:
        return False
    if sorted(first) == sorted(second):
        return True
    if len(first) == 1 or len(second) == 1:
        return given_names_agree(first[0], second[0])
    return first[-1] == second[-1] and given_names_agree(first[0], second[0])


def given_names_agree(one: str, other: str) -> bool:
    """Return whether two folded given names are equal, nicknames of each
    other, or one is the other's initial."""
    if one == other or other in name_variants(one):
        return True
    short, long = sorted((one, other), key=len)
    return len(short) == 1 and long.startswith(short)


@cache
def _variants() -> dict[str, frozenset[str]]:
    pairs: dict[str, set[str]] = {}

    def add(first: str, second: str) -> None:
        first, second = fold_name(first), fold_name(second)
        if first and second and first != second:
            pairs.setdefault(first, set()).add(second)
            pairs.setdefault(second, set()).add(first)

    for name, nicknames in NickNamer().nickname_lookup.items():
        for nickname in nicknames:
            add(name, nickname)
    for name, variant in _german_pairs():
        add(name, variant)
    return {name: frozenset(variants) for name, variants in pairs.items()}


def _german_pairs() -> list[tuple[str, str]]:
    with GERMAN_NICKNAMES.open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if line.strip() and not line.startswith("#")]
    return [(row["name"], row["variant"]) for row in csv.DictReader(lines)]
