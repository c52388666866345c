"""The provider categories find_known_provider knows, and how a word names one.

The categories are the trade concepts of the engine's one vocabulary
(people_search.engine.vocabulary) marked `provider`: dentist, doctor, garage,
… each with its German and English words and the rules that keep look-alikes
apart ("Tierarzt" is no doctor, "Fahrradwerkstatt" no garage). Defining the
words once lets find_person's relation matching and find_known_provider
agree on what a "Zahnarzt" is.

A contact's writes file it under its categories in its concepts (beside the
"relation:<id>" the engine derives): "business:<id>" when a business's name
reveals the category, "tag:<id>" when a tag names it (the engine's tokens, so
find_person's descriptors find the same contacts: "die Werkstatt"). One GIN
index then finds a category's contacts, however large the address book.
"""

from collections.abc import Iterable

from contacts.models import ContactKind
from people_search.engine.matching import (
    business_concept_token,
    relation_concept_token,
    tag_concept_token,
)
from people_search.engine.text import fold_name, fold_words
from people_search.engine.vocabulary import VOCABULARY, Concept

ProviderCategory = Concept

CATEGORIES: tuple[ProviderCategory, ...] = tuple(
    concept for concept in VOCABULARY if concept.provider
)

_BY_ID = {category.id: category for category in CATEGORIES}
_FOLDED_TAGS = {
    category.id: frozenset(fold_name(tag) for tag in category.tag_spellings)
    for category in CATEGORIES
}


class UnknownCategory(ValueError):
    """The text names no category, or several."""


def known_category_ids() -> list[str]:
    return sorted(_BY_ID)


def get_category(category_id: str) -> ProviderCategory:
    """Return the category with the given id, or raise UnknownCategory."""
    try:
        return _BY_ID[category_id]
    except KeyError:
        raise UnknownCategory(_unknown_message(category_id)) from None


def categories_revealed_by(text: str) -> list[ProviderCategory]:
    """Return every category the text reveals, in id order."""
    return sorted(
        (category for category in CATEGORIES if category.is_revealed_by(text)),
        key=lambda category: category.id,
    )


def names_by_tag(category: ProviderCategory, tag: str) -> bool:
    """Return whether a contact's tag files it under the category ("Zahnarzt")."""
    return fold_name(tag) in _FOLDED_TAGS[category.id]


def provider_tokens(*, kind: str, display_name: str, tags: Iterable[str]) -> list[str]:
    """Return the tokens that file a contact under the categories it provides."""
    tokens = [
        _tag_token(category)
        for category in CATEGORIES
        if any(names_by_tag(category, tag) for tag in tags)
    ]
    if kind == ContactKind.BUSINESS:
        tokens += map(business_token, categories_revealed_by(display_name))
    return tokens


def business_token(category: ProviderCategory) -> str:
    """Return the token of a business whose name reveals the category."""
    return business_concept_token(category.id)


def _tag_token(category: ProviderCategory) -> str:
    return tag_concept_token(category.id)


def category_tokens(category: ProviderCategory) -> list[str]:
    """Return the tokens of every contact that may be a provider of the category.

    Its relation, business name or a tag names the category.
    """
    return [
        relation_concept_token(category.id),
        business_token(category),
        _tag_token(category),
    ]


def resolve_category(text: str) -> ProviderCategory:
    """Return the one category a user's word means: an id, a name or a keyword.

    "Zahnärztin", "dentist" and "ZAHNARZT" all mean dentist; "Tierarzt" means
    veterinary, never doctor. Raise UnknownCategory for none or several.
    """
    key = "_".join(fold_words(text))
    if key in _BY_ID:
        return _BY_ID[key]
    found = categories_revealed_by(text)
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(category.id for category in found)
        raise UnknownCategory(f"Category {text!r} is ambiguous: {ids}.")
    raise UnknownCategory(_unknown_message(text))


def _unknown_message(text: str) -> str:
    return f"Unknown category {text!r}. Known: {', '.join(known_category_ids())}."
