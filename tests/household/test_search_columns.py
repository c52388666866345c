"""The columns people search reads for profiles and leads."""

from household.search_columns import person_columns


def test_german_names_fold_umlauts_eszett_and_their_spellings():
    columns = person_columns(
        first_name="Jörg",
        last_name="Müller-Lüdenscheidt",
        email="Joerg.Strauss@Example.org",
        fallback_name="joerg",
    )

    assert columns == {
        "sort_name": "jorg muller-ludenscheidt",
        "search_text": "jorg muller-ludenscheidt jorg.strauss@example.org",
        "match_text": "| jorg muller ludenscheidt |@jorg@strauss@example@org@|",
    }


def test_an_empty_first_or_last_name_leaves_no_gap():
    first_only = person_columns(
        first_name="Änne", last_name="", email="", fallback_name="aenne"
    )
    last_only = person_columns(
        first_name="", last_name="Strauß", email="", fallback_name="strauss"
    )

    assert first_only == {
        "sort_name": "anne",
        "search_text": "anne",
        "match_text": "| anne |",
    }
    assert last_only == {
        "sort_name": "strauss",
        "search_text": "strauss",
        "match_text": "| strauss |",
    }


def test_without_a_name_the_fallback_sorts_but_is_not_searched():
    profile = person_columns(
        first_name="", last_name=" ", email="", fallback_name="Björn.K"
    )
    lead = person_columns(
        first_name="",
        last_name="",
        email="Dana@Example.org",
        fallback_name="Dana@Example.org",
    )

    assert profile == {"sort_name": "bjorn.k", "search_text": "", "match_text": ""}
    assert lead == {
        "sort_name": "dana@example.org",
        "search_text": "dana@example.org",
        "match_text": "|@dana@example@org@|",
    }


def test_nothing_at_all_gives_empty_columns():
    assert person_columns(first_name="", last_name="", email="", fallback_name="") == {
        "sort_name": "",
        "search_text": "",
        "match_text": "",
    }
