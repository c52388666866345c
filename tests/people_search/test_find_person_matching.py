"""find_person understands what an assistant sends and ranks honestly.

German and English articles, possessives and titles, relation words as
concepts in both languages, nicknames; rows ordered by match strength, each
with its `match`, and `ambiguous` only when the best strength is shared.
"""

import pytest

from tests.builders import build_contact, build_member


def find(api, query, **inputs):
    response = api.call("find_person", {"query": query, **inputs})
    assert response.status_code == 200, response.content
    return response.json()


def found(body):
    """Return (name, match) of every row, in order."""
    return [
        (row.get("display_name") or row["name"], row["match"])
        for row in body["results"]
    ]


@pytest.fixture
def becker(household):
    """A small German household's address book."""
    contacts = [
        ("Gisela Becker", "Großmutter", ["Oma", "Oma Gisela"]),
        ("Ruth Adler", "Schwiegermutter", ["Oma Ruth", "Savta"]),
        ("Hildegard Strauß", "Oma von Paul", []),
        ("Thomas Müller", "Kollege (Anna)", []),
        ("Nina Lorenz", "Kollegin (Anna)", []),
        ("Sven Koch", "Chef (Anna)", []),
        ("Sabine Müller", "Nachbarin (2. OG)", []),
        ("Familie Wendt", "Nachbarn (Haus gegenüber)", []),
        ("Josef Huber", "Nachbar", []),
        ("Frank Neumann", "Steuerberater", []),
        ("Dirk Lehmann", "Klempner", []),
        ("Dr. Petra Schmidt", "Hausärztin", []),
        ("Kerstin Hahn", "Klassenlehrerin (Lena)", []),
        ("Olga Petrova", "Klavierlehrerin (Lena)", []),
        ("Gabriele Hartmann", "Patentante von Lena", ["Tante Gabi"]),
    ]
    for name, relation, aliases in contacts:
        build_contact(household, name, relation=relation, aliases=aliases)
    build_member(household, "lena", first_name="Lena", last_name="Becker")
    return household


# Query understanding ------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("mein Steuerberater", [("Frank Neumann", "relation")]),
        ("der Klempner", [("Dirk Lehmann", "relation")]),
        ("Frau Dr. Schmidt", [("Dr. Petra Schmidt", "name")]),
        ("my tax advisor", [("Frank Neumann", "relation")]),
        ("the plumber", [("Dirk Lehmann", "relation")]),
        ("unsere Patentante", [("Gabriele Hartmann", "relation")]),
    ],
)
def test_articles_possessives_and_titles_say_nothing_about_who(
    api, becker, query, expected
):
    body = find(api, query)

    assert found(body) == expected
    assert body["ambiguous"] is False


@pytest.mark.parametrize("query", ["grandma", "Omi", "Großmutter", "my granny"])
def test_a_relation_word_finds_its_concept_in_either_language(api, becker, query):
    body = find(api, query, source="contacts")

    assert found(body) == [
        ("Gisela Becker", "relation"),
        ("Hildegard Strauß", "relation"),
        ("Ruth Adler", "alias"),  # "Oma Ruth"; her relation is Schwiegermutter
    ]
    assert body["ambiguous"] is True


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Nachbarn", ["Familie Wendt", "Josef Huber", "Sabine Müller"]),
        ("neighbour", ["Familie Wendt", "Josef Huber", "Sabine Müller"]),
        ("Kollegin", ["Nina Lorenz", "Thomas Müller"]),
        ("colleague", ["Nina Lorenz", "Thomas Müller"]),
        ("Chefin", ["Sven Koch"]),
        ("boss", ["Sven Koch"]),
        ("Ärztin", ["Dr. Petra Schmidt"]),
        ("godmother", ["Gabriele Hartmann"]),
    ],
)
def test_relation_words_match_across_inflection_gender_and_language(
    api, becker, query, expected
):
    body = find(api, query)

    assert [name for name, _ in found(body)] == expected
    assert {match for _, match in found(body)} == {"relation"}


def test_oma_finds_the_grandmothers_best_first_and_never_thomas(api, becker):
    body = find(api, "Oma")

    assert found(body) == [
        ("Gisela Becker", "alias"),  # an alias is exactly "Oma"
        ("Ruth Adler", "alias"),  # an alias starts with it
        ("Hildegard Strauß", "relation"),  # her relation names a grandmother
    ]
    assert body["count"] == 3
    assert body["ambiguous"] is False
    assert "card" not in body


def test_a_term_inside_a_word_is_found_only_without_stronger_matches(api, becker):
    body = find(api, "homas")

    assert found(body) == [("Thomas Müller", "name")]


def test_count_is_of_every_match_beyond_the_rows_returned(api, household):
    for number in range(12):
        build_contact(household, f"Hans Inside{number}")
    for name in ("Anke Vogel", "Andreas Roth", "Antje Brandt"):
        build_contact(household, name)

    strong = find(api, "an", source="contacts", limit=2)
    inside = find(api, "nsid", source="contacts", limit=2)

    # Three start a word with "an"; the twelve Hans (and Brandt) only hold it.
    assert found(strong) == [("Andreas Roth", "name"), ("Anke Vogel", "name")]
    assert strong["count"] == 3
    assert found(inside) == [("Hans Inside0", "name"), ("Hans Inside1", "name")]
    assert inside["count"] == 12


def test_a_nickname_finds_the_given_name(api, becker):
    body = find(api, "Sepp Huber")

    assert found(body) == [("Josef Huber", "nickname")]
    assert body["ambiguous"] is False


def test_a_nickname_of_two_letters_is_found_as_a_word(api, household):
    build_contact(household, "Ed Brandt")
    build_contact(household, "Ab-Levi Stern")
    build_contact(household, "Edda Abel")  # holds "ed" and "ab", as no word

    assert found(find(api, "Edward", source="contacts")) == [("Ed Brandt", "nickname")]
    assert found(find(api, "Abraham", source="contacts")) == [
        ("Ab-Levi Stern", "nickname")
    ]


def test_a_german_short_form_finds_a_household_member(api, household):
    build_member(household, "jo", first_name="Johannes", last_name="Weber")

    body = find(api, "Hans Weber", source="household")

    assert found(body) == [("Johannes Weber", "nickname")]


# Ranking and ambiguity ----------------------------------------------------------


def test_one_lena_by_name_and_mentions_of_her_is_not_ambiguous(api, becker):
    body = find(api, "Lena")

    assert found(body) == [
        ("Lena Becker", "name"),
        ("Gabriele Hartmann", "relation"),
        ("Kerstin Hahn", "relation"),
        ("Olga Petrova", "relation"),
    ]
    assert body["count"] == 4
    assert body["ambiguous"] is False
    assert "card" not in body


def test_two_people_named_hans_are_ambiguous(api, household):
    build_contact(household, "Hans Becker", relation="Onkel")
    build_member(household, "hans", first_name="Hans", last_name="Meier")

    body = find(api, "Hans")

    assert found(body) == [("Hans Becker", "name"), ("Hans Meier", "name")]
    assert body["ambiguous"] is True


def test_rows_come_by_strength_then_by_name(api, household):
    build_contact(household, "Zoe Hans")  # a name with the query as a word
    build_contact(household, "Hans")  # exactly the query
    build_contact(household, "Johannes Adler")  # a nickname
    build_contact(household, "Adam Kurz", relation="Freund von Hans")  # relation
    build_contact(household, "Anna Berg", aliases=["Hansi"])  # an alias prefix

    body = find(api, "hans", source="contacts")

    assert found(body) == [
        ("Hans", "name"),
        ("Zoe Hans", "name"),
        ("Anna Berg", "alias"),
        ("Johannes Adler", "nickname"),
        ("Adam Kurz", "relation"),
    ]
    assert body["ambiguous"] is False


def test_several_contacts_sharing_the_best_match_get_a_picker_card(api, becker):
    body = find(api, "grandma", source="contacts")

    assert body["card"]["kind"] == "contact_picker"


@pytest.mark.parametrize(
    ("inputs", "match"),
    [
        ({"query": "hans@example"}, "email"),
        ({"query": "030 1234567"}, "phone"),
        ({"channel_kind": "phone", "channel_value": "030 1234567"}, "channel"),
        ({"query": "Onkel Hans"}, "alias"),
        ({"query": "Onkel"}, "alias"),
        ({"query": "uncle"}, "relation"),
    ],
)
def test_every_row_says_why_it_matched(api, household, inputs, match):
    build_contact(
        household,
        "Hans Becker",
        relation="Onkel",
        aliases=["Onkel Hans"],
        channels=[
            {"kind": "phone", "value": "030 1234567"},
            {"kind": "email", "value": "hans@example.org"},
        ],
    )

    response = api.call("find_person", {"source": "contacts", **inputs})

    assert [row["match"] for row in response.json()["results"]] == [match]


def test_a_plain_listing_has_no_match(api, household):
    body = api.call("find_person", {"source": "household"}).json()

    assert [row["match"] for row in body["results"]] == [None]


def test_the_manifest_lists_match_with_its_values(api):
    manifest = api.get("/api/skills/find_person/").json()

    assert "match" in str(manifest["outputs"])
    schema = api.get("/api/schema/").content.decode()
    for value in ("nickname", "relation", "alias", "channel", "similar_name"):
        assert value in schema


# An English household -----------------------------------------------------------


@pytest.fixture
def cohen(other_household, api_as):
    build_contact(
        other_household, "Rivka Cohen", relation="grandmother", aliases=["Savta"]
    )
    build_contact(other_household, "Tal Avidan", relation="plumber")
    build_contact(other_household, "Moshe Levy", relation="neighbour (3rd floor)")
    build_member(other_household, "bob", first_name="Robert", last_name="Katz")
    return api_as(build_member(other_household, "yael", role="admin"))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("my grandma", [("Rivka Cohen", "relation")]),
        ("Oma", [("Rivka Cohen", "relation")]),
        ("Savta", [("Rivka Cohen", "alias")]),
        ("the Klempner", [("Tal Avidan", "relation")]),
        ("our neighbor", [("Moshe Levy", "relation")]),
        ("Mr Levy", [("Moshe Levy", "name")]),
        ("Bob", [("Robert Katz", "nickname")]),
    ],
)
def test_an_english_household_is_found_in_both_languages(cohen, query, expected):
    assert found(find(cohen, query)) == expected
