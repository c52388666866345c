"""The engine writes its match conditions as SQL itself: constants stay constants."""

import pytest

from contacts.models import Contact
from contacts.selectors import CONTACT_COLUMNS
from people_search.engine.matching import (
    Reason,
    Tier,
    find_matches,
    match_reason,
    match_values,
)
from people_search.engine.query import Query, Term
from tests.builders import build_contact


@pytest.mark.parametrize(
    "word", ["o'brien", "o''; drop table x; --", "100%", "a_b", "{pk}", "back\\slash"]
)
def test_any_word_is_matched_as_text(household, word):
    """Folded words are letters and digits, but nothing breaks the SQL if not."""
    contact = build_contact(household, "Placeholder")
    other = build_contact(household, "Someone Else")
    Contact.objects.filter(pk=contact.pk).update(
        search_text=word, match_text=f"| {word} |"
    )
    query = Query(text=word, terms=(Term(text=word, words=(word,)),), phone_digits=None)

    rows = [
        (value["pk"], value["match_tier"], match_reason(query, value, CONTACT_COLUMNS))
        for value in find_matches(
            Contact.objects.filter(household=household),
            query=query,
            columns=CONTACT_COLUMNS,
            similar_ids=[other.pk],
        ).values("pk", *match_values(CONTACT_COLUMNS))
    ]

    assert sorted(rows) == sorted(
        [
            (contact.pk, Tier.EXACT, Reason.NAME),
            (other.pk, Tier.SIMILAR, Reason.SIMILAR_NAME),
        ]
    )
