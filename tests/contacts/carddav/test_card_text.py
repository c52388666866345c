"""The card and field merges of the CardDAV sync, as pure functions."""

from contacts.carddav.card_text import merge_card_text
from contacts.carddav.sync import merge_fields

OURS = (
    "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:yorik-1\r\nKIND:org\r\nFN:Praxis Weber\r\n"
    "ORG:Praxis Weber\r\nX-ABSHOWAS:COMPANY\r\nTEL;VALUE=uri:tel:+4930123456\r\n"
    "item1.TEL;VALUE=uri:tel:+4930999999\r\nitem1.X-ABLABEL:Notdienst\r\n"
    "END:VCARD\r\n"
)


def lines(card: str) -> list[str]:
    return card.replace("\r\n", "\n").strip().split("\n")


def test_a_3_0_card_keeps_its_version_other_lines_and_item_groups():
    server = (
        "BEGIN:VCARD\nVERSION:3.0\nUID:abc\nFN:Alt\nREV:2020-01-01\n"
        "TEL;TYPE=WORK:+49 30 1\n"
        "item1.X-ABDATE:2000-01-01\nitem1.X-ABLabel:Eröffnung\n"
        "item2.URL:https://alt.example\nitem2.X-ABLabel:_$!<HomePage>!$_\n"
        "PHOTO;ENCODING=b:AAAA\n BBBB\nEND:VCARD\n"
    )

    merged = lines(merge_card_text(server, OURS))

    assert merged == [
        "BEGIN:VCARD",
        "VERSION:3.0",
        "FN:Praxis Weber",
        "ORG:Praxis Weber",
        "X-ABSHOWAS:COMPANY",
        "TEL:+4930123456",
        # The server's item1 stays; ours moves past it.
        "item2.TEL:+4930999999",
        "item2.X-ABLABEL:Notdienst",
        "UID:abc",
        "item1.X-ABDATE:2000-01-01",
        "item1.X-ABLabel:Eröffnung",
        "PHOTO;ENCODING=b:AAAA",
        " BBBB",
        "END:VCARD",
    ]


def test_a_4_0_card_gets_our_4_0_lines_and_a_persons_org_is_ours():
    server = (
        "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Anna\r\nORG:Stadtwerke\r\n"
        "BDAY:--0415\r\nGENDER:F\r\nEND:VCARD\r\n"
    )
    ours = (
        "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:u1\r\nFN:Anna Roth\r\n"
        "ORG:Stadtwerke Kiel\r\nBDAY:19800415\r\nEND:VCARD\r\n"
    )

    assert lines(merge_card_text(server, ours)) == [
        "BEGIN:VCARD",
        "VERSION:4.0",
        "UID:u1",
        "FN:Anna Roth",
        "ORG:Stadtwerke Kiel",
        "BDAY:19800415",
        "GENDER:F",
        "END:VCARD",
    ]


def test_a_3_0_card_gets_days_and_the_anniversary_the_3_0_way():
    server = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Anna\r\nEND:VCARD\r\n"
    ours = (
        "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Anna Roth\r\nBDAY:--0415\r\n"
        "ANNIVERSARY:20050611\r\nEND:VCARD\r\n"
    )

    assert lines(merge_card_text(server, ours)) == [
        "BEGIN:VCARD",
        "VERSION:3.0",
        "FN:Anna Roth",
        "BDAY:--04-15",
        "X-ANNIVERSARY:2005-06-11",
        "END:VCARD",
    ]


def document(**fields):
    return {
        "display_name": "Anna Roth",
        "first_name": "Anna",
        "last_name": "Roth",
        "kind": "person",
        "relation": "",
        "status": "active",
        "notes": "",
        "organization": "",
        "title": "",
        "birthday": "",
        "anniversary": "",
        "aliases": [],
        "tags": [],
        "urls": [],
        "channels": [],
        "addresses": [],
        **fields,
    }


def phone(value):
    return {"kind": "phone", "value": value, "label": ""}


def test_fields_merge_one_by_one():
    base = document(channels=[phone("+491")], notes="alt", tags=["a"])
    server = document(channels=[phone("+492")], notes="alt", tags=["b"])
    current = document(
        channels=[phone("+491"), {"kind": "email", "value": "a@x.de", "label": ""}],
        notes="neu",
        tags=["c"],
        relation="Cousine",
    )

    merged, conflicts = merge_fields(
        base_server=base, server={**server, "relation": ""}, base=base, current=current
    )

    assert merged["channels"] == [
        {"kind": "email", "value": "a@x.de", "label": ""},
        phone("+492"),
    ]
    assert merged["notes"] == "neu"  # only Yorik changed it
    assert merged["tags"] == ["b"]  # both changed it: the server wins
    assert merged["relation"] == "Cousine"  # the card says nothing of it
    assert conflicts == ["tags"]


def test_the_same_change_on_both_sides_is_no_conflict():
    base = document(notes="alt")
    both = document(notes="neu")

    merged, conflicts = merge_fields(
        base_server=base, server=both, base=base, current=both
    )

    assert (merged["notes"], conflicts) == ("neu", [])
