"""The household's words for people: kinship, social ties and trades, as concepts.

One vocabulary for every surface, kept as data in vocabulary.toml beside
this module. A concept (grandmother, neighbour, plumber, dentist, …) lists its
German and English words, each inflected and gendered form that people write
("Oma", "Omi", "Großmutter", "grandma"; "Kollege", "Kollegin", "Kollegen").
The provider categories of find_known_provider (contacts.providers.categories)
are the trade concepts marked `provider`.

A text names a concept when one of its words
- equals a whole word ("Oma", "Vet"): short words, and words whose compounds
  mean something else ("Mutter" but not "Schwiegermutter" or "Großmutter");
- starts with a keyword ("Nachbarin" starts with "Nachbar",
  "Zahnarztpraxis" with "Zahnarzt"); keywords with spaces are phrases whose
  last word is a prefix ("tax advisor", "Dr. med.");
- contains a compound part ("Kinderzahnarzt" contains "zahnarzt").

Two lists keep look-alikes apart. An excluded part cancels a hit inside the
same word, or an excluded phrase at the same place: "Tierarzt" contains
"arzt" yet is no doctor, "mother-in-law" is no mother. A veto is a word start
that makes the whole text about something else: "Vermieter Garage
(Stellplatz)" is a parking space, so no garage.

Every comparison is on folded text (people_search.engine.text.fold_name), so
case, accents and German spellings do not matter: "ZAHNÄRZTIN" = "Zahnaerztin".
The same rules read a relation or an alias when it is written and a query
word when it is asked, so "grandma" finds the "Großmutter" of a German
household.
"""

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from people_search.engine.text import fold_name, fold_words


def _phrases(keywords: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(words for keyword in keywords if (words := fold_words(keyword)))


@dataclass(frozen=True)
class Concept:
    """A kind of person to the household, and the words that name it."""

    id: str
    name_en: str
    name_de: str
    keywords: tuple[str, ...] = ()
    compound_parts: tuple[str, ...] = ()
    whole_words: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    vetoes: tuple[str, ...] = ()
    provider: bool = False
    titles: tuple[str, ...] = ()
    _keywords: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _parts: tuple[str, ...] = field(init=False, repr=False)
    _whole: frozenset[str] = field(init=False, repr=False)
    _excluded: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _vetoes: tuple[str, ...] = field(init=False, repr=False)
    _stems: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        folded = {
            "_keywords": _phrases(self.keywords),
            "_parts": tuple(fold_name(part) for part in self.compound_parts),
            "_whole": frozenset(
                word for phrase in self.whole_words for word in fold_words(phrase)
            ),
            "_excluded": _phrases(self.excluded),
            "_vetoes": tuple(fold_name(word) for word in self.vetoes),
        }
        for name, value in folded.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_stems", self._search_stems())

    @property
    def tag_spellings(self) -> tuple[str, ...]:
        """Return the tags that file a contact under this concept."""
        names = (self.id, self.name_en, self.name_de)
        return tuple(dict.fromkeys([*names, *(name.lower() for name in names)]))

    @property
    def search_stems(self) -> tuple[str, ...]:
        """Return folded strings every revealing text contains one of.

        They let SQL narrow the rows (LIKE '%stem%') before `is_revealed_by`
        decides; a phrase is represented by its longest word.
        """
        return self._stems

    def _search_stems(self) -> tuple[str, ...]:
        stems = [max(words, key=len) for words in self._keywords]
        stems = list(dict.fromkeys([*stems, *self._parts, *self._whole]))
        # A stem containing a shorter one adds no row the shorter misses.
        return tuple(
            stem
            for stem in stems
            if not any(other != stem and other in stem for other in stems)
        )

    def is_revealed_by(self, text: str) -> bool:
        """Return whether the text names this concept."""
        return self.is_named_by_words(fold_words(text))

    def is_named_by_words(self, words: tuple[str, ...]) -> bool:
        """Return whether these folded words name this concept."""
        # Every hit is a word containing a stem: most words are rejected here.
        text = " ".join(words)
        if not any(stem in text for stem in self._stems):
            return False
        if any(word.startswith(self._vetoes) for word in words):
            return False
        return any(
            self._hit_at(words, index) and not self._excluded_at(words, index)
            for index in range(len(words))
        )

    def _hit_at(self, words: tuple[str, ...], index: int) -> bool:
        word = words[index]
        if word in self._whole or any(part in word for part in self._parts):
            return True
        return any(_phrase_at(words, index, phrase) for phrase in self._keywords)

    def _excluded_at(self, words: tuple[str, ...], index: int) -> bool:
        for phrase in self._excluded:
            if len(phrase) == 1 and phrase[0] in words[index]:
                return True
            if len(phrase) > 1 and _phrase_at(words, index, phrase):
                return True
        return False


def _phrase_at(words: tuple[str, ...], index: int, phrase: tuple[str, ...]) -> bool:
    """Return whether the phrase starts at words[index]; its last word is a prefix."""
    end = index + len(phrase)
    if end > len(words):
        return False
    *leading, last = phrase
    return list(words[index : end - 1]) == leading and words[end - 1].startswith(last)


def _load_vocabulary() -> tuple[Concept, ...]:
    with VOCABULARY_FILE.open("rb") as file:
        entries = tomllib.load(file)["concept"]
    return tuple(
        Concept(
            **{
                key: tuple(value) if isinstance(value, list) else value
                for key, value in entry.items()
            }
        )
        for entry in entries
    )


VOCABULARY_FILE = Path(__file__).with_name("vocabulary.toml")
VOCABULARY: tuple[Concept, ...] = _load_vocabulary()

_BY_ID = {concept.id: concept for concept in VOCABULARY}


def get_concept(concept_id: str) -> Concept:
    """Return the concept with the given id, or raise KeyError."""
    return _BY_ID[concept_id]


def concepts_titled(title: str) -> tuple[str, ...]:
    """Return the ids of the concepts whose people carry this folded title word
    ("dr": doctor, dentist, veterinary)."""
    return _TITLED.get(title, ())


def _titled() -> dict[str, tuple[str, ...]]:
    titled: dict[str, list[str]] = {}
    for concept in VOCABULARY:
        for title in concept.titles:
            for word in fold_words(title):
                titled.setdefault(word, []).append(concept.id)
    return {word: tuple(ids) for word, ids in titled.items()}


_TITLED = _titled()


def concepts_named_by(text: str) -> tuple[str, ...]:
    """Return the ids of the concepts a relation, an alias or a query names."""
    return _concepts_of_words(fold_words(text))


# Relations repeat across an address book and queries repeat across calls.
@lru_cache(maxsize=4096)
def _concepts_of_words(words: tuple[str, ...]) -> tuple[str, ...]:
    if not words:
        return ()
    return tuple(
        concept.id for concept in VOCABULARY if concept.is_named_by_words(words)
    )
