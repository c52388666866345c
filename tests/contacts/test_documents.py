"""A contact's document compared and merged field by field, as pure functions."""

from contacts.documents import (
    FIELDS,
    added,
    added_kinds,
    changed_fields,
    channel_key,
    combined,
    field_value,
    fill,
    joined,
    keep,
    merge_documents,
    same_fields,
    take,
    take_given,
    with_names_as_aliases,
)
from people_search.engine.text import fold_name


def document(**fields):
    return {
        "display_name": "Anna Roth",
        "first_name": "Anna",
        "last_name": "Roth",
        "kind": "person",
        "relation": "",
        "status": "active",
        "notes": "",
        "aliases": [],
        "tags": [],
        "channels": [],
        "addresses": [],
        **fields,
    }


def channel(kind, value, label=""):
    return {"kind": kind, "value": value, "label": label}


def address(kind, city):
    return {
        "kind": kind,
        "line1": "",
        "line2": "",
        "postcode": "",
        "city": city,
        "country": "",
    }


# Comparing


def test_lists_compare_in_any_order():
    first = document(
        tags=["a", "b"],
        channels=[channel("phone", "+491"), channel("email", "a@x.de")],
        addresses=[address("home", "Köln"), address("work", "Bonn")],
    )
    second = document(
        tags=["b", "a"],
        channels=[channel("email", "a@x.de"), channel("phone", "+491")],
        addresses=[address("work", "Bonn"), address("home", "Köln")],
    )

    assert same_fields(first, second)


def test_each_kind_of_channel_is_a_field_and_a_label_counts():
    before = document(channels=[channel("phone", "+491"), channel("email", "a@x.de")])
    after = document(
        channels=[channel("phone", "+491", "mobil"), channel("email", "a@x.de")]
    )

    assert changed_fields(before, after) == ["channels.phone"]
    assert field_value(after, "channels.phone") == [("+491", "mobil")]
    assert field_value(after, "channels.whatsapp") == []


def test_changed_fields_come_in_the_order_of_the_fields():
    before = document()
    after = document(notes="neu", display_name="Anna Maria Roth", tags=["x"])

    assert changed_fields(before, after) == ["display_name", "notes", "tags"]


def test_a_field_outside_the_compared_ones_counts_only_when_named():
    first = {**document(), "vcard_uid": "a"}
    second = {**document(), "vcard_uid": "b"}

    assert same_fields(first, second)
    assert not same_fields(first, second, fields=(*FIELDS, "vcard_uid"))


# Rules of one field


def test_scalar_rules():
    assert keep("ours", "theirs") == "ours"
    assert take("ours", "") == ""
    assert take_given("ours", "theirs") == "theirs"
    assert take_given("ours", "") == "ours"
    assert fill("ours", "theirs") == "ours"
    assert fill("", "theirs") == "theirs"


def test_joined_notes_are_paragraphs_without_a_repeat():
    assert joined(" alt ", "neu\n") == "alt\n\nneu"
    assert joined("gleich", "gleich ") == "gleich"
    assert joined("", "neu") == "neu"


def test_added_keeps_ours_as_it_is_and_appends_what_theirs_adds():
    rule = added(key=channel_key)
    ours = [channel("phone", "+491", "privat"), channel("phone", "+491", "doppelt")]
    theirs = [channel("phone", "+492"), channel("phone", "+491", "mobil")]

    assert rule(ours, theirs) == [*ours, channel("phone", "+492")]


def test_added_merges_an_item_both_have_by_its_twin_rule():
    def relabelled(ours, theirs):
        return {**ours, "label": theirs["label"] or ours["label"]}

    rule = added(key=channel_key, twin=relabelled)
    ours = [channel("phone", "+491", "privat"), channel("email", "a@x.de", "alt")]
    theirs = [channel("email", "a@x.de"), channel("phone", "+491", "mobil")]

    assert rule(ours, theirs) == [
        channel("phone", "+491", "mobil"),
        channel("email", "a@x.de", "alt"),
    ]


def test_added_kinds_replace_every_item_of_a_kind_and_keep_the_others():
    stored = [
        address("home", "Köln"),
        address("work", "Bonn"),
        address("home", "Sylt"),
        address("work", "Jena"),
    ]
    card = [address("work", "Aachen"), address("work", "Trier")]

    assert added_kinds(card, stored) == [
        address("work", "Aachen"),
        address("work", "Trier"),
        address("home", "Köln"),
        address("home", "Sylt"),
    ]


def test_combined_drops_repeats_and_empty_items_on_both_sides():
    assert combined()(["a", "", "b", "a"], ["b", "c", ""]) == ["a", "b", "c"]
    assert combined(key=fold_name)(["Oma", "oma"], ["OMA", "Opa"]) == ["Oma", "Opa"]


# Whole documents


def test_a_field_no_rule_names_stays_ours():
    ours = document(notes="ours", tags=["a"])
    theirs = document(notes="theirs", tags=["b"], display_name="Other")

    merged = merge_documents(ours, theirs, {"tags": take})

    assert merged == document(notes="ours", tags=["b"])
    assert ours == document(notes="ours", tags=["a"])


def test_a_kind_of_channel_taken_moves_behind_the_other_kinds():
    ours = document(channels=[channel("phone", "+491"), channel("email", "a@x.de")])
    theirs = document(channels=[channel("phone", "+492")])

    merged = merge_documents(ours, theirs, {"channels.phone": take})

    assert merged["channels"] == [channel("email", "a@x.de"), channel("phone", "+492")]


def test_addresses_merged_kind_by_kind_come_in_the_order_of_the_rules():
    ours = document(addresses=[address("work", "Bonn"), address("home", "Köln")])
    theirs = document(addresses=[address("home", "Aachen"), address("billing", "Jena")])

    merged = merge_documents(
        ours,
        theirs,
        {
            "addresses.home": take_given,
            "addresses.work": fill,
            "addresses.billing": fill,
            "addresses.shipping": fill,
        },
    )

    assert merged["addresses"] == [
        address("home", "Aachen"),
        address("work", "Bonn"),
        address("billing", "Jena"),
    ]


def test_merged_items_are_copies():
    theirs = document(channels=[channel("phone", "+492")])

    merged = merge_documents(document(), theirs, {"channels": take})
    merged["channels"][0]["label"] = "changed"

    assert theirs["channels"] == [channel("phone", "+492")]


def test_names_become_aliases_unless_the_document_goes_by_them():
    merged = with_names_as_aliases(
        document(aliases=["Annie"]),
        ["ANNA ROTH", "annie", "Anna Maria", "", "anna maria"],
    )

    assert merged["aliases"] == ["Annie", "Anna Maria"]
