"""The one fold and the one word splitter every text goes through.

Case, accents and German spellings compare equal once folded; words are the
runs of letters and digits of the folded text. A folded word respelled as it
sounds (`sound_key`) tells spellings heard the same.
"""

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TypeVar

_LETTER_SPELLINGS = str.maketrans(
    {
        "ß": "ss",
        "ẞ": "ss",
        "æ": "ae",
        "Æ": "ae",
        "œ": "oe",
        "Œ": "oe",
        "ø": "o",
        "Ø": "o",
        "ł": "l",
        "Ł": "l",
        "đ": "d",
        "Đ": "d",
        "ð": "d",
        "þ": "th",
        "\u0131": "i",  # dotless i
        "\u2019": "'",
        "\u2018": "'",
        "`": "'",
        "\u00b4": "'",
    }
)


def _bare_latin_letters() -> dict[int, str]:
    """Map each Latin letter with marks to what NFKD leaves once its marks go.

    Translating them first leaves most European text ASCII, which fold_name
    folds without decomposing it character by character: the same result.
    """
    table = {}
    for code in range(0xC0, 0x250):
        bare = "".join(
            char
            for char in unicodedata.normalize("NFKD", chr(code))
            if not unicodedata.combining(char)
        )
        if bare != chr(code) and bare.isascii():
            table[code] = bare
    return table


_LETTER_SPELLINGS = {**_bare_latin_letters(), **_LETTER_SPELLINGS}
_TERM_SEPARATORS = re.compile(r"[\s,]+")
_WORD = re.compile(r"[^\W_]+")
T = TypeVar("T")


def fold_name(text: str) -> str:
    """Return text lower-cased, unaccented, with German umlaut spellings unified."""
    text = text.translate(_LETTER_SPELLINGS)
    # ASCII has nothing to decompose: skip the character by character pass.
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(char for char in text if not unicodedata.combining(char))
    # "Mueller" is how "Müller" is written without umlauts; folding both
    # spellings (and the accent-stripped "Muller") to one form lets each find
    # the others. The three never overlap: replacing each in turn is one pass.
    text = text.casefold().replace("ae", "a").replace("oe", "o").replace("ue", "u")
    return " ".join(text.split())


def search_terms(query: str) -> list[str]:
    """Split a query on whitespace and commas into folded, distinct terms."""
    terms: list[str] = []
    for part in _TERM_SEPARATORS.split(query):
        term = fold_name(part)
        if term and term not in terms:
            terms.append(term)
    return terms


def search_document(*parts: str | None) -> str:
    """Join the folded parts of a row into the text its search column holds.

    Parts are separated by a space, and terms never contain one, so a term
    can only match inside a single part.
    """
    return " ".join(folded for part in parts if part and (folded := fold_name(part)))


def holding_every_term(
    items: Iterable[T], query: str, *, document: Callable[[T], str]
) -> list[T]:
    """Return the items whose folded document holds every term of the query.

    A term matches anywhere inside the document, so "mull" finds "muller";
    a query with no terms keeps every item.
    """
    terms = search_terms(query)
    return [item for item in items if all(term in document(item) for term in terms)]


def fold_words(text: str) -> tuple[str, ...]:
    """Return the folded words of a text, split at anything but letters and digits."""
    return folded_words(fold_name(text))


def folded_words(folded: str) -> tuple[str, ...]:
    """Return the words of a text fold_name has folded already (a stored column)."""
    return tuple(_WORD.findall(folded))


def name_words(name: str) -> list[str]:
    """Return the folded words of a name that are made of letters only."""
    return [word for word in fold_words(name) if word.isalpha()]


# German and English spellings of one sound, in the order they are respelled:
# y and j as i before ie and ei are read, doubled letters collapsed last.
_SOUNDS = [
    (re.compile(pattern), spelling)
    for pattern, spelling in [
        (r"y", "i"),
        (r"j", "i"),
        (r"sch", "sh"),
        (r"ph", "f"),
        (r"ck", "k"),
        (r"ch", "k"),
        (r"qu", "kw"),
        (r"x", "ks"),
        (r"c", "k"),
        (r"(?<=[^aeiou])h|h(?=[^aeiou]|$)", ""),
        (r"dt", "t"),
        (r"d$", "t"),
        (r"tz", "s"),
        (r"z", "s"),
        (r"v", "w"),
        (r"ie", "i"),
        (r"ei", "ai"),
        (r"ou|oo", "u"),
        (r"(.)\1+", r"\1"),
    ]
]


@lru_cache(maxsize=4096)
def sound_key(word: str) -> str:
    """Return the word respelled as it sounds: Meier, Mayer -> "maier"."""
    for pattern, spelling in _SOUNDS:
        word = pattern.sub(spelling, word)
    return word
