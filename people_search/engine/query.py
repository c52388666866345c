"""What a typed query asks for: its terms, their concepts and nicknames, phone digits.

An assistant writes what the user said: "mein Steuerberater", "der Klempner",
"Frau Dr. Schmidt", "my grandma". Articles, possessives and honorifics say
nothing about who is meant, so they are dropped while other terms remain
("Frau" alone is still searched). Titles are dropped as terms too, but kept
as evidence: "Dr. Kaya" prefers the Kaya who is a doctor. Each remaining
term carries the concepts it names ("grandma" → grandmother) and the given
names it is a nickname or variant of ("Sepp" → Josef). Words that form one
concept only together ("tax advisor", "mother in law") become one term.
"""

from dataclasses import dataclass

from people_search.engine.nicknames import name_variants
from people_search.engine.phones import phone_query_digits
from people_search.engine.text import fold_words, search_terms, sound_key
from people_search.engine.vocabulary import concepts_named_by

_ARTICLES = frozenset(
    {"der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem"}
    | {"einer", "eines", "the", "a", "an"}
)
_POSSESSIVES = frozenset(
    stem + ending
    for stem in ("mein", "dein", "sein", "ihr", "unser")
    for ending in ("", "e", "en", "em", "er", "es")
) | frozenset(
    {"euer", "eure", "euren", "eurem", "eurer", "eures"}
    | {"my", "your", "his", "her", "our", "their"}
)
_HONORIFICS = frozenset(
    {"frau", "herr", "herrn", "fr", "hr", "mr", "mrs", "ms", "miss", "mx"}
)
_TITLES = frozenset({"dr", "prof", "dipl", "ing"})
# The field of a doctorate ("Dr. med. dent."): a title only right after one.
_DOCTORATE_FIELDS = frozenset({"med", "dent", "vet", "rer", "nat", "phil", "jur"})
_DETERMINERS = _ARTICLES | _POSSESSIVES
STOP_WORDS = _DETERMINERS | _HONORIFICS | _TITLES
# The longest concept phrase the vocabulary has ("daughter in law").
_LONGEST_PHRASE = 3


@dataclass(frozen=True)
class Term:
    """One thing the query asks for; every term must match a row."""

    text: str
    words: tuple[str, ...]
    concepts: tuple[str, ...] = ()
    nicknames: tuple[str, ...] = ()
    # The nicknames and variants heard as the term ("stefan" for "stephan").
    spellings: tuple[str, ...] = ()
    # Words of the household's names heard as this term, spelled otherwise
    # ("catrin" for "katrin"); filled in from the name index when asked.
    sounds: tuple[str, ...] = ()

    @property
    def phrase(self) -> str:
        """Return the term's words joined by single spaces."""
        return " ".join(self.words)


@dataclass(frozen=True)
class Query:
    """A parsed query: terms that must all match, and phone digits."""

    text: str
    terms: tuple[Term, ...]
    phone_digits: str | None
    typed_phrase: str = ""
    # The titles dropped from the query ("dr" of "Dr. Kaya"), folded.
    titles: tuple[str, ...] = ()

    @property
    def phrase(self) -> str:
        """Return the words of every term, in order: a whole name or alias."""
        return " ".join(term.phrase for term in self.terms)

    @property
    def exact_phrases(self) -> tuple[str, ...]:
        """Return the phrases a name or alias equal to the query would be.

        With and without the dropped words: "Frau Peters" is an alias too.
        """
        return tuple(dict.fromkeys(p for p in (self.phrase, self.typed_phrase) if p))

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.phone_digits

    @property
    def has_letter(self) -> bool:
        return any(char.isalpha() for char in self.text)

    @property
    def looks_like_email(self) -> bool:
        return "@" in self.text


def parse_query(text: str, *, region: str) -> Query:
    """Return what a free-text query asks for in a household of the given region."""
    text = (text or "").strip()
    typed = [
        (term, words) for term in search_terms(text) if (words := fold_words(term))
    ]
    kept = _without_stop_terms(typed)
    dropped = [words for term, words in typed if (term, words) not in kept]
    return Query(
        text=text,
        terms=tuple(_with_meaning(kept)),
        phone_digits=phone_query_digits(text, region),
        typed_phrase=" ".join(" ".join(words) for _, words in typed),
        titles=tuple(
            dict.fromkeys(
                word for words in dropped for word in words if word in _TITLES
            )
        ),
    )


def _without_stop_terms(
    typed: list[tuple[str, tuple[str, ...]]],
) -> list[tuple[str, tuple[str, ...]]]:
    """Return the terms that are not articles, possessives, honorifics or titles.

    When nothing else is left, articles and possessives go and the honorifics
    and titles stay ("meine Frau" looks for "Frau"); when those are all there
    is, every term stays.
    """
    stops = _stop_terms(typed)
    kept = [term for term, stop in zip(typed, stops, strict=True) if not stop]
    if kept:
        return kept
    return [
        (term, words)
        for term, words in typed
        if not all(word in _DETERMINERS for word in words)
    ] or typed


def _stop_terms(typed: list[tuple[str, tuple[str, ...]]]) -> list[bool]:
    """Return for each term whether it is only articles, possessives, honorifics
    or titles ("Dr. med." is a title, "med" alone is not)."""
    stops = []
    after_title = False
    for _, words in typed:
        stop = True
        for word in words:
            if word in STOP_WORDS:
                after_title = word in _TITLES
            elif after_title and word in _DOCTORATE_FIELDS:
                pass
            else:
                stop = after_title = False
        stops.append(stop)
    return stops


def _with_meaning(typed: list[tuple[str, tuple[str, ...]]]) -> list[Term]:
    """Return the terms with their concepts and nicknames, concept phrases joined."""
    terms: list[Term] = []
    index = 0
    while index < len(typed):
        for length in range(min(_LONGEST_PHRASE, len(typed) - index), 1, -1):
            span = typed[index : index + length]
            words = tuple(word for _, span_words in span for word in span_words)
            concepts = concepts_named_by(" ".join(words))
            apart = {c for _, span_words in span for c in _concepts(span_words)}
            if set(concepts) - apart:
                terms.append(
                    Term(
                        text=" ".join(term for term, _ in span),
                        words=words,
                        concepts=concepts,
                    )
                )
                index += length
                break
        else:
            term, words = typed[index]
            nicknames = _nicknames(words)
            terms.append(
                Term(
                    text=term,
                    words=words,
                    concepts=_concepts(words),
                    nicknames=nicknames,
                    spellings=tuple(
                        nickname
                        for nickname in nicknames
                        if sound_key(nickname) == sound_key(words[0])
                    ),
                )
            )
            index += 1
    return terms


def _concepts(words: tuple[str, ...]) -> tuple[str, ...]:
    return concepts_named_by(" ".join(words))


def _nicknames(words: tuple[str, ...]) -> tuple[str, ...]:
    if len(words) != 1 or not words[0].isalpha():
        return ()
    return tuple(sorted(name_variants(words[0])))
