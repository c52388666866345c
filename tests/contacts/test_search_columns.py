"""The columns the matching engine reads for a contact."""

from contacts.search_columns import contact_columns


def columns(**fields):
    defaults = {
        "first_name": "",
        "last_name": "",
        "kind": "person",
        "relation": "",
        "aliases": [],
        "tags": [],
        "emails": [],
        "phones": [],
        "region": "DE",
    }
    return contact_columns(**(defaults | fields))


def test_names_relation_aliases_and_emails_are_folded_in_order():
    result = columns(
        display_name="Jürgen Müller",
        first_name="Jürgen",
        last_name="Müller",
        relation="Großvater",
        aliases=["Opa Jürgen", "Juergen"],
        emails=["juergen.mueller@example.org"],
    )

    assert result["sort_name"] == "jurgen muller"
    assert result["search_text"] == (
        "jurgen muller jurgen muller grossvater opa jurgen jurgen "
        "jurgen.muller@example.org"
    )


def test_phone_digits_are_the_national_significant_numbers():
    german = columns(
        display_name="Hans Becker", phones=["+49301234567", "+491711234567"]
    )
    israeli = columns(display_name="Yossi Levi", phones=["+972501234567"], region="IL")

    assert german["phone_digits"] == "301234567 1711234567"
    assert israeli["phone_digits"] == "501234567"


def test_a_business_with_only_its_name_searches_by_that_name():
    assert columns(display_name="Zahnärzte am Markt") == {
        "sort_name": "zahnarzte am markt",
        "search_text": "zahnarzte am markt",
        "match_text": "| zahnarzte am markt |",
        "concepts": [],
        "phone_digits": "",
    }


def test_words_are_kept_by_field_and_relations_read_into_concepts():
    result = columns(
        display_name="Gisela Becker",
        first_name="Gisela",
        last_name="Becker",
        relation="Großmutter",
        aliases=["Oma", "Oma Gisela"],
        emails=["gisela@example.org"],
    )

    assert result["match_text"] == (
        "| gisela becker |~oma~|~oma~gisela~|=grossmutter=|@gisela@example@org@|"
    )
    assert result["concepts"] == ["alias:grandmother", "relation:grandmother"]


def test_every_language_of_a_relation_names_the_same_concept():
    german = columns(display_name="Dirk Lehmann", relation="Klempner")
    english = columns(display_name="Tal Avidan", relation="plumber")
    aliased = columns(display_name="Rivka Cohen", aliases=["Savta"])

    assert german["concepts"] == english["concepts"] == ["relation:plumber"]
    assert aliased["concepts"] == ["alias:grandmother"]


def test_businesses_and_tags_are_filed_under_their_provider_categories():
    practice = columns(display_name="Zahnarztpraxis Dr. Roth", kind="business")
    person = columns(display_name="Gerd Zahnarzt")
    tagged = columns(display_name="Praxis am Park", tags=["ZAHNARZT", "familie"])
    garage = columns(
        display_name="Autohaus Krüger", kind="business", tags=["Werkstatt"]
    )

    assert practice["concepts"] == ["business:dentist"]
    assert person["concepts"] == []  # a surname is no evidence
    assert tagged["concepts"] == ["tag:dentist"]
    assert garage["concepts"] == ["business:garage", "tag:garage"]
