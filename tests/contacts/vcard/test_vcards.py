"""vCard import and export: three dialects, re-imports, bad input, the round trip."""

import base64
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact, ContactChannel
from contacts.services import update_contact
from contacts.vcard.exporter import export_vcards
from contacts.vcard.importer import VCardTooLarge, import_vcards
from tests.builders import build_contact, build_household
from yorik.bundles import import_household

SAMPLES = Path(__file__).parent / "samples"
DEMO_BUNDLE = Path(__file__).parents[3] / "household" / "demo" / "becker.json"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def vcard(*lines: str, version: str = "3.0") -> bytes:
    """Return one card of the given lines, CRLF-terminated like real exports."""
    return "\r\n".join(
        ["BEGIN:VCARD", f"VERSION:{version}", *lines, "END:VCARD", ""]
    ).encode()


def described(contact: Contact) -> dict[str, Any]:
    """Return what a person sees of a contact, children in stored order."""
    return {
        "display_name": contact.display_name,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "kind": contact.kind,
        "relation": contact.relation,
        "status": contact.status,
        "aliases": [alias.name for alias in contact.aliases.order_by("pk")],
        "tags": contact.tags,
        "notes": contact.notes,
        "organization": contact.organization,
        "title": contact.title,
        "birthday": contact.birthday,
        "anniversary": contact.anniversary,
        "urls": contact.urls,
        "channels": [
            (c.kind, c.value, c.label) for c in contact.channels.order_by("pk")
        ],
        "addresses": [
            (
                *(a.kind, a.line1, a.line2, a.postcode, a.city, a.country),
                *(a.po_box, a.extended, a.region),
            )
            for a in contact.addresses.order_by("pk")
        ],
    }


def address_book(household) -> dict[str, dict[str, Any]]:
    return {
        contact.display_name: described(contact)
        for contact in Contact.objects.filter(household=household)
    }


def writes(queries: CaptureQueriesContext) -> list[str]:
    return [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]


# The three dialects


def test_google_export_gives_names_labels_tags_and_a_business(household):
    summary = import_vcards(household=household, data=sample("google.vcf"))

    assert str(summary) == "found 5: created 5, updated 0, unchanged 0, skipped 0"
    book = address_book(household)
    assert book["Gisela Becker"] == {
        "display_name": "Gisela Becker",
        "first_name": "Gisela",
        "last_name": "Becker",
        "kind": "person",
        "relation": "",
        "status": "active",
        "aliases": ["Oma"],
        "tags": ["Familie"],
        "notes": "Geburtstag am 14. März. Hört am Telefon schlecht \N{EN DASH} "
        "laut und langsam sprechen, am besten vormittags.",
        "organization": "",
        "title": "",
        "birthday": "",
        "anniversary": "",
        "urls": [],
        "channels": [
            ("email", "gisela.becker@example.net", "privat"),
            ("phone", "+491624418307", "mobil"),
            ("phone", "+494067745120", "Festnetz"),
        ],
        "addresses": [
            ("home", "Rahlstedter Straße 112", "", "22149", "Hamburg", "DE", "", "", "")
        ],
    }
    # Jonas's own card says who Hans is to him; "Lena" has no card here.
    assert book["Hans Becker"]["relation"] == "Onkel"
    assert book["Hans Becker"]["tags"] == ["Familie"]
    assert ("email", "hans.becker@example.org", "Privat-Mail") in book["Hans Becker"][
        "channels"
    ]
    assert book["Jonas Becker"]["relation"] == ""
    dentist = book["Zahnarztpraxis Dr. Schmidt"]
    assert (dentist["kind"], dentist["first_name"], dentist["last_name"]) == (
        "business",
        "",
        "",
    )
    assert dentist["notes"] == (
        "Recall alle 6 Monate, Prophylaxe bei Frau Beck.\nTermine nur vormittags."
    )
    assert dentist["channels"] == [
        ("phone", "+493029774410", "geschäftlich"),
        ("email", "praxis@zahnarzt-schmidt.example", "geschäftlich"),
    ]
    # A business's ORG is its name, not kept twice; its website is a web address.
    assert (dentist["organization"], dentist["urls"]) == (
        "",
        ["https://zahnarzt-schmidt.example"],
    )
    # A person's company, job title and birthday are kept.
    thomas = book["Thomas Müller"]
    assert thomas["kind"] == "person"
    assert (thomas["organization"], thomas["title"], thomas["birthday"]) == (
        "GreenGrid Energie GmbH",
        "Teamleiter Netzplanung",
        "1984-06-02",
    )


def test_apple_export_reads_relations_from_the_owners_card(household):
    summary = import_vcards(household=household, data=sample("apple.vcf"))

    assert str(summary) == "found 4: created 4, updated 0, unchanged 0, skipped 0"
    book = address_book(household)
    assert book["Gisela Becker"]["relation"] == "Mutter"
    assert book["Werner Becker"]["relation"] == "Vater"
    assert book["Jonas Becker"]["relation"] == ""
    assert book["Gisela Becker"]["channels"] == [
        ("phone", "+494067745120", "Festnetz"),
        ("phone", "+491624418307", "mobil"),
        ("email", "gisela.becker@example.net", ""),
    ]
    assert book["Werner Becker"]["channels"] == [
        ("phone", "+494067745120", "Festnetz"),
        ("whatsapp", "+491725509184", "WhatsApp"),
    ]
    assert book["Müller Haustechnik GmbH"] | {"notes": ""} == {
        "display_name": "Müller Haustechnik GmbH",
        "first_name": "",
        "last_name": "",
        "kind": "business",
        "relation": "",
        "status": "active",
        "aliases": [],
        "tags": [],
        "notes": "",
        "organization": "",
        "title": "",
        "birthday": "",
        "anniversary": "",
        "urls": ["https://mueller-haustechnik.example"],
        "channels": [
            ("phone", "+493054098820", "Hauptnummer"),
            ("phone", "+493054098829", "Notdienst"),
            ("email", "service@mueller-haustechnik.example", "geschäftlich"),
        ],
        "addresses": [
            (
                "work",
                "Möllendorffstraße 68",
                "Hof 2",
                "10367",
                "Berlin",
                "Deutschland",
                "",
                "",
                "",
            )
        ],
    }
    assert Contact.objects.get(display_name="Jonas Becker").vcard_uid == (
        "2B5E9C1A-7F3D-4E8B-9A61-0C4D5E6F7A81"
    )


def test_android_21_decodes_quoted_printable_umlauts_and_soft_breaks(household):
    summary = import_vcards(household=household, data=sample("android.vcf"))

    assert str(summary) == "found 5: created 5, updated 0, unchanged 0, skipped 0"
    book = address_book(household)
    assert book["Sabine Müller"] == {
        "display_name": "Sabine Müller",
        "first_name": "Sabine",
        "last_name": "Müller",
        "kind": "person",
        "relation": "Nachbarin",
        "status": "active",
        "aliases": ["Bine"],
        "tags": [],
        "notes": "Hat unseren Ersatzschlüssel, bitte vorher anrufen. Gießt im "
        "Urlaub die Blumen auf dem Balkon.",
        "organization": "",
        "title": "",
        "birthday": "",
        "anniversary": "",
        "urls": [],
        "channels": [
            ("phone", "+491716620917", "mobil"),
            ("phone", "+493029360544", "privat"),
        ],
        "addresses": [
            (
                "home",
                "Gärtnerstraße 24",
                "",
                "10245",
                "Berlin",
                "",
                "",
                "2. OG links",
                "",
            )
        ],
    }
    assert book["Hildegard Straß"]["notes"] == (
        "Weihnachtskarte nicht vergessen!\nMag keine Anrufe nach 20 Uhr."
    )
    # Its only address has no type.
    assert book["Hildegard Straß"]["addresses"][0][0] == "home"
    assert book["Tobias Becker"]["relation"] == "Bruder"
    assert book["Ahmet Yildiz"]["channels"][1] == (
        "phone",
        "+493029361100",
        "geschäftlich",
    )


def test_vcard_4_reads_tel_uris_chat_ids_and_related_people(household):
    summary = import_vcards(household=household, data=sample("v4.vcf"))

    assert str(summary) == "found 5: created 5, updated 0, unchanged 0, skipped 0"
    book = address_book(household)
    assert book["Miriam Shani"]["relation"] == "Geschwister"  # RELATED by UID
    assert book["Ruth Adler"]["relation"] == "Elternteil"  # RELATED by name
    assert book["Noa Mizrahi"]["relation"] == ""  # TYPE=contact says nothing
    assert book["Ruth Adler"]["aliases"] == ["Oma Ruth", "Savta"]
    assert book["Ruth Adler"]["tags"] == ["Familie", "Köln"]
    assert book["Ruth Adler"]["channels"] == [
        ("phone", "+492214403917", "privat"),
        ("phone", "+4915128830461", "mobil"),
        ("signal", "+4915128830461", "Signal"),
        ("email", "ruth.adler@example.com", "privat"),
    ]
    assert book["Noa Mizrahi"]["channels"] == [
        ("phone", "+4917622190846", "mobil"),
        ("phone", "+972586140227", ""),
        ("signal", "noa.07", "Signal"),
        ("other", "noa@jabber.example", "Jabber"),
    ]
    assert book["Noa Mizrahi"]["addresses"] == [
        ("home", "Lenaustraße 9", "", "12047", "Berlin", "DE", "", "", "")
    ]
    orthodontist = book["Kieferorthopädie Dr. Lange"]
    assert orthodontist["kind"] == "business"
    assert [address[0] for address in orthodontist["addresses"]] == [
        "work",
        "billing",
    ]
    assert book["Miriam Shani"]["channels"][1] == (
        "whatsapp",
        "+972546617203",
        "WhatsApp",
    )


def test_english_household_gets_english_labels_and_relations(other_household):
    data = vcard(
        "FN:Dana Levi",
        "N:Levi;Dana;;;",
        "TEL;TYPE=CELL:+972 52 441 8096",
        "EMAIL;TYPE=HOME:dana.levi@example.com",
    ) + vcard(
        "FN:Yossi Levi",
        "item1.X-ABRELATEDNAMES:Dana Levi",
        "item1.X-ABLabel:_$!<Mother>!$_",
    )

    import_vcards(household=other_household, data=data)

    dana = address_book(other_household)["Dana Levi"]
    assert dana["relation"] == "mother"
    assert dana["channels"] == [
        ("phone", "+972524418096", "mobile"),
        ("email", "dana.levi@example.com", "home"),
    ]


# Re-imports


@pytest.mark.parametrize(
    "name", ["google.vcf", "apple.vcf", "android.vcf", "v4.vcf", "broken.vcf"]
)
def test_reimporting_the_same_file_changes_nothing(household, name):
    first = import_vcards(household=household, data=sample(name))
    before = address_book(household)

    with CaptureQueriesContext(connection) as queries:
        second = import_vcards(household=household, data=sample(name))

    assert (second.created, second.updated) == (0, 0)
    assert second.unchanged == first.created
    assert second.problems == first.problems
    assert writes(queries) == []
    assert address_book(household) == before


def test_changed_card_updates_its_contact_and_keeps_what_it_does_not_carry(
    household,
):
    import_vcards(household=household, data=sample("google.vcf"))
    gisela = Contact.objects.get(display_name="Gisela Becker")
    stored = described(gisela)
    update_contact(
        contact=gisela,
        aliases=stored["aliases"],
        channels=[
            {"kind": kind, "value": value, "label": label}
            for kind, value, label in stored["channels"]
        ]
        + [{"kind": "whatsapp", "value": "+491624418307", "label": "WhatsApp"}],
        addresses=[],
        relation="Großmutter",
    )
    changed = (
        sample("google.vcf")
        .decode()
        .replace("TEL;TYPE=CELL:0162 4418307", "TEL;TYPE=CELL:0162 5550199")
        .replace("NOTE:Geburtstag am 14. März.", "NOTE:Geburtstag am 15. März.")
    )

    summary = import_vcards(household=household, data=changed.encode())

    assert str(summary) == "found 5: created 0, updated 1, unchanged 4, skipped 0"
    updated = Contact.objects.get(pk=gisela.pk)
    assert "1625550199" in updated.phone_digits.split()
    gisela = described(updated)
    assert gisela["relation"] == "Großmutter"
    assert gisela["notes"].startswith("Geburtstag am 15. März.")
    # The card's new mobile is added; the old one, which the card no longer
    # lists, stays: an export never knows every number added elsewhere.
    assert sorted(gisela["channels"]) == [
        ("email", "gisela.becker@example.net", "privat"),
        ("phone", "+491624418307", "mobil"),
        ("phone", "+491625550199", "mobil"),
        ("phone", "+494067745120", "Festnetz"),
        ("whatsapp", "+491624418307", "WhatsApp"),
    ]
    assert gisela["addresses"] == [
        ("home", "Rahlstedter Straße 112", "", "22149", "Hamburg", "DE", "", "", "")
    ]


def test_card_matches_a_contact_by_a_shared_phone_under_an_agreeing_name(household):
    gisela = build_contact(
        household,
        "Gisela",
        channels=[{"kind": "phone", "value": "0162 4418307", "label": "mobil"}],
    )

    summary = import_vcards(household=household, data=sample("google.vcf"))

    assert (summary.created, summary.updated) == (4, 1)
    # The contact keeps its own name; the card's becomes an alias.
    assert described(Contact.objects.get(pk=gisela.pk))["aliases"] == [
        "Oma",
        "Gisela Becker",
    ]
    assert Contact.objects.filter(household=household).count() == 5


def test_a_shared_phone_under_another_name_gives_a_new_contact(household):
    oma = build_contact(
        household,
        "Oma Gisela",
        channels=[{"kind": "phone", "value": "0162 4418307", "label": "mobil"}],
    )

    summary = import_vcards(household=household, data=sample("google.vcf"))

    assert (summary.created, summary.updated) == (5, 0)
    assert described(Contact.objects.get(pk=oma.pk))["display_name"] == "Oma Gisela"


def test_card_matches_a_namesake_only_without_a_conflicting_channel(household):
    juergen = build_contact(
        household,
        "Jürgen Müller",
        channels=[{"kind": "email", "value": "j.mueller@example.de"}],
    )
    thomas = build_contact(
        household,
        "Thomas Müller",
        channels=[{"kind": "phone", "value": "030 1112223"}],
    )
    data = vcard("FN:Juergen Mueller", "TEL:0171 1234567") + vcard(
        "FN:Thomas Müller", "TEL:0171 7654321"
    )

    summary = import_vcards(household=household, data=data)

    assert (summary.created, summary.updated) == (1, 1)
    juergen.refresh_from_db()
    assert juergen.display_name == "Juergen Mueller"
    assert juergen.channels.count() == 2
    assert (
        Contact.objects.filter(household=household, display_name="Thomas Müller")
        .exclude(pk=thomas.pk)
        .exists()
    )


def test_family_landline_on_two_cards_does_not_merge_them(household):
    gisela = build_contact(
        household,
        "Gisela Becker",
        channels=[{"kind": "phone", "value": "040 67745120", "label": "Festnetz"}],
    )

    import_vcards(household=household, data=sample("apple.vcf"))

    gisela.refresh_from_db()
    werner = Contact.objects.get(household=household, display_name="Werner Becker")
    assert gisela.vcard_uid == "6C1F0E4B-3A2D-4B9C-8E7F-1D2C3B4A5968"
    assert werner.pk != gisela.pk
    assert Contact.objects.filter(household=household).count() == 4


def test_contact_of_another_card_is_not_matched_by_its_phone(household):
    build_contact(
        household,
        "Clara Jung",
        vcard_uid="clara-1",
        channels=[{"kind": "phone", "value": "030 44039271"}],
    )

    summary = import_vcards(
        household=household,
        data=vcard("UID:moritz-1", "FN:Moritz Jung", "TEL:030 44039271"),
    )

    assert summary.created == 1
    assert Contact.objects.filter(household=household).count() == 2


def test_uid_finds_a_renamed_contact(household):
    import_vcards(household=household, data=sample("v4.vcf"))
    miriam = Contact.objects.get(display_name="Miriam Shani")
    renamed = (
        sample("v4.vcf")
        .decode()
        .replace("FN:Miriam Shani", "FN:Miriam Shani-Katz")
        .replace("tel:+972-54-661-7203", "tel:+972-54-661-0000")
    )

    summary = import_vcards(household=household, data=renamed.encode())

    assert str(summary) == "found 5: created 0, updated 1, unchanged 4, skipped 0"
    miriam.refresh_from_db()
    assert miriam.display_name == "Miriam Shani-Katz"
    assert miriam.channels.filter(value="+972546610000").exists()


def test_import_stays_inside_its_household(household, other_household):
    theirs = build_contact(
        other_household,
        "Gisela Becker",
        channels=[{"kind": "phone", "value": "+49 162 4418307"}],
    )

    summary = import_vcards(household=household, data=sample("google.vcf"))

    assert summary.created == 5
    assert described(Contact.objects.get(pk=theirs.pk))["channels"] == [
        ("phone", "+491624418307", "")
    ]
    assert Contact.objects.filter(household=other_household).count() == 1


# Bad input


def test_bad_cards_are_reported_with_number_and_name_and_skipped(household):
    summary = import_vcards(household=household, data=sample("broken.vcf"))

    assert str(summary) == "found 8: created 6, updated 0, unchanged 0, skipped 2"
    assert summary.problems == [
        "card 5 (Hanna Halbfertig): no END:VCARD before line 31",
        "card 8 (Otto Ohneanfang): no BEGIN:VCARD before line 46",
    ]
    # What cannot be used is dropped and named; the rest of the card is kept.
    assert summary.warnings == [
        "card 2 (Karl Kaputt): line 11 ignored: not a vCard property: "
        "'this line has no colon'",
        "card 4 (Max Mustermann): TEL 'abc' ignored: not a phone number for region DE",
    ]
    book = address_book(household)
    assert sorted(book) == [
        "0157 12345678",
        "Clara Jung",
        "Erika Krause",
        "Karl Kaputt",
        "Max Mustermann",
        "Rolf Schubert",
    ]
    assert book["Karl Kaputt"]["channels"] == [("phone", "+491701112223", "mobil")]
    assert book["Max Mustermann"]["channels"] == [
        ("email", "max.mustermann@example.org", "")
    ]


def test_card_failing_validation_leaves_nothing_behind(household):
    data = (
        vcard("FN:Erika Krause", "TEL:030 2912847")
        + vcard("FN:Lars", "item1.TEL:0152 31948820", f"item1.X-ABLabel:{'x' * 80}")
        + vcard("FN:Kevin Wagner", "TEL:0176 11902248", "EMAIL:kevin(at)example")
    )

    summary = import_vcards(household=household, data=data)

    assert summary.problems == [
        "card 2 (Lars): channels[0].label: Ensure this value has at most 64 "
        "characters (it has 80).",
    ]
    assert summary.warnings == [
        "card 3 (Kevin Wagner): EMAIL 'kevin(at)example' ignored: not an email address",
    ]
    assert list(address_book(household)) == ["Erika Krause", "Kevin Wagner"]
    assert ContactChannel.objects.filter(household=household).count() == 2


def test_failing_update_leaves_the_contact_as_it_was(household):
    import_vcards(household=household, data=sample("google.vcf"))
    before = address_book(household)
    changed = (
        sample("google.vcf")
        .decode()
        .replace("item1.X-ABLabel:Festnetz", f"item1.X-ABLabel:{'x' * 70}")
        .replace("NOTE:Geburtstag am 14. März.", "NOTE:Geburtstag am 15. März.")
    )

    summary = import_vcards(household=household, data=changed.encode())

    assert summary.problems == [
        "card 1 (Gisela Becker): channels[2].label: Ensure this value has at "
        "most 64 characters (it has 70)."
    ]
    assert address_book(household) == before


def test_contact_groups_are_skipped(household):
    data = vcard("FN:Familie", "KIND:group", version="4.0") + vcard(
        "FN:Nachbarn", "X-ADDRESSBOOKSERVER-KIND:group"
    )

    summary = import_vcards(household=household, data=data)

    assert summary.problems == [
        "card 1 (Familie): is a contact group (KIND), not a contact",
        "card 2 (Nachbarn): is a contact group (X-ADDRESSBOOKSERVER-KIND), "
        "not a contact",
    ]
    assert not Contact.objects.exists()


def test_file_in_a_windows_code_page_is_read(household):
    data = vcard("FN:Jürgen Müller", "NOTE:Schlüssel beim Nachbarn").decode()

    import_vcards(household=household, data=data.encode("cp1252"))

    assert address_book(household)["Jürgen Müller"]["notes"] == (
        "Schlüssel beim Nachbarn"
    )


def test_dry_run_reports_what_a_real_run_does_and_writes_nothing(household):
    dry = import_vcards(household=household, data=sample("broken.vcf"), dry_run=True)

    assert not Contact.objects.filter(household=household).exists()
    real = import_vcards(household=household, data=sample("broken.vcf"))
    assert (str(dry), dry.problems) == (str(real), real.problems)


def test_file_over_the_size_cap_is_refused(household, settings, tmp_path):
    settings.YORIK_VCARD_MAX_BYTES = 1024
    path = tmp_path / "apple.vcf"
    path.write_bytes(sample("apple.vcf"))

    with pytest.raises(VCardTooLarge, match="YORIK_VCARD_MAX_BYTES"):
        import_vcards(household=household, data=sample("apple.vcf"))
    with pytest.raises(CommandError, match=r"at most 0\.0 MB"):
        call_command("import_vcard", str(path), household="becker")
    assert not Contact.objects.exists()


def test_huge_photo_is_ignored(household):
    photo = base64.b64encode(bytes(range(256)) * 8192).decode()  # 2 MB of JPEG
    folded = "\r\n ".join(photo[i : i + 74] for i in range(0, len(photo), 74))

    summary = import_vcards(
        household=household,
        data=vcard("FN:Erika Krause", f"PHOTO;ENCODING=b;TYPE=JPEG:{folded}"),
    )

    assert str(summary) == "found 1: created 1, updated 0, unchanged 0, skipped 0"


# Export


def test_export_writes_vcard_4_for_every_contact_but_spam(household):
    build_contact(
        household,
        "Gisela Becker",
        first_name="Gisela",
        last_name="Becker",
        relation="Großmutter",
        aliases=["Oma"],
        channels=[
            {"kind": "phone", "value": "0162 4418307", "label": "mobil"},
            {"kind": "phone", "value": "040 67745120", "label": "Festnetz"},
            {"kind": "whatsapp", "value": "+491725509184", "label": "WhatsApp"},
        ],
        addresses=[{"kind": "shipping", "line1": "Packstation 187", "city": "Kiel"}],
    )
    build_contact(household, "Apotheke am Markt", kind="business", tags=["pharmacy"])
    build_contact(household, "Gewinnspiel Hotline", status="spam")

    text = export_vcards(household=household)

    assert text.count("BEGIN:VCARD\r\n") == 2
    assert text.index("FN:Apotheke am Markt") < text.index("FN:Gisela Becker")
    assert "Gewinnspiel" not in text
    for line in [
        "VERSION:4.0",
        "KIND:org",
        "ORG:Apotheke am Markt",
        "CATEGORIES:pharmacy",
        "N:Becker;Gisela;;;",
        "NICKNAME:Oma",
        "TEL;TYPE=cell;VALUE=uri:tel:+491624418307",
        "item1.TEL;VALUE=uri:tel:+494067745120",
        "item1.X-ABLABEL:Festnetz",
        "IMPP:whatsapp:+491725509184",
        "ADR;TYPE=x-shipping:;;Packstation 187;Kiel;;;",
        "X-YORIK-RELATION:Großmutter",
    ]:
        assert f"\r\n{line}\r\n" in text


def test_export_then_import_into_an_empty_household_gives_the_same_contacts(db):
    demo = json.loads(DEMO_BUNDLE.read_text(encoding="utf-8"))
    bundle = {
        "format": demo["format"],
        "household": demo["household"] | {"slug": "becker-demo"},
        "contacts": demo["contacts"],
    }
    source = import_household(bundle=bundle, replace=False)
    empty = build_household("leer", default_region=source.default_region)

    summary = import_vcards(
        household=empty, data=export_vcards(household=source).encode()
    )

    expected = {
        name: contact
        for name, contact in address_book(source).items()
        if contact["status"] != "spam"
    }
    assert str(summary) == (
        f"found {len(expected)}: created {len(expected)}, updated 0, "
        "unchanged 0, skipped 0"
    )
    assert address_book(empty) == expected


# Management commands


def test_import_vcard_command_prints_summary_and_problems(household):
    out, err = StringIO(), StringIO()

    call_command(
        "import_vcard",
        str(SAMPLES / "broken.vcf"),
        household="becker",
        stdout=out,
        stderr=err,
    )

    assert out.getvalue().strip() == (
        "found 8: created 6, updated 0, unchanged 0, skipped 2"
    )
    assert "card 4 (Max Mustermann): TEL 'abc' ignored" in err.getvalue()
    assert "card 5 (Hanna Halbfertig): no END:VCARD" in err.getvalue()


def test_import_vcard_command_dry_run_writes_nothing(household):
    out = StringIO()

    call_command(
        "import_vcard",
        str(SAMPLES / "google.vcf"),
        household="becker",
        dry_run=True,
        stdout=out,
    )

    assert out.getvalue().strip() == (
        "Dry run, nothing written: "
        "found 5: created 5, updated 0, unchanged 0, skipped 0"
    )
    assert not Contact.objects.exists()


def test_import_vcard_command_needs_a_known_household(db):
    with pytest.raises(CommandError, match="No household 'nobody'"):
        call_command("import_vcard", str(SAMPLES / "google.vcf"), household="nobody")


def test_export_vcard_command_writes_a_file_or_stdout(household, tmp_path):
    build_contact(household, "Erika Krause")
    out = StringIO()

    call_command("export_vcard", "--household=becker", f"--out={tmp_path / 'b.vcf'}")
    call_command("export_vcard", household="becker", stdout=out)

    written = (tmp_path / "b.vcf").read_bytes().decode()
    assert "FN:Erika Krause\r\n" in written
    assert out.getvalue() == written
