"""An imported address book loses nothing (issue 37): what each card says is kept.

Every ADR with its PO box, extended address and region; phones read in the
card's country or kept as written; a person's company, job title, days, chat
ids and web addresses; every encoding the files come in. Each rule has its
own small file in tests/data/vcards, imported with `manage.py import_vcard`;
what is kept goes back out through `export_vcard`, the bundle and the admin.
"""

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from contacts.models import Contact
from contacts.vcard.importer import import_vcards
from household.models import Membership
from tests.builders import build_contact, build_household, build_member
from yorik.bundles import BundleError, export_household, import_household

CORPUS = Path(__file__).parents[2] / "data" / "vcards"
IMPORT_URL = reverse("admin:contacts_contact_import_vcard")

pytestmark = pytest.mark.django_db


def run(path: Path, household: str = "becker") -> tuple[str, list[str]]:
    """Import a file with the command; return its stdout and stderr's lines."""
    out, err = StringIO(), StringIO()
    call_command("import_vcard", str(path), household=household, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue().splitlines()


def export(household: str = "becker") -> str:
    out = StringIO()
    call_command("export_vcard", household=household, stdout=out)
    return out.getvalue()


def kept(household) -> dict[str, dict[str, Any]]:
    """Return each contact as a person sees it, children in their order."""
    return {
        contact.display_name: {
            "organization": contact.organization,
            "title": contact.title,
            "birthday": contact.birthday,
            "anniversary": contact.anniversary,
            "urls": contact.urls,
            "channels": [
                (c.kind, c.value, c.label, c.as_written)
                for c in contact.channels.order_by("pk")
            ],
            "addresses": [
                {
                    "kind": a.kind,
                    **{
                        name: getattr(a, name)
                        for name in ("po_box", "extended", "line1", "line2")
                        if getattr(a, name)
                    },
                    "city": a.city,
                    **({"region": a.region} if a.region else {}),
                }
                for a in contact.addresses.order_by("pk")
            ],
        }
        for contact in Contact.objects.filter(household=household)
    }


# Addresses


def test_every_address_is_kept_with_its_po_box_extended_address_and_region(
    household,
):
    out, err = run(CORPUS / "addresses-many.vcf")

    assert out == "found 2: created 2, updated 0, unchanged 0, skipped 0"
    assert err == [
        "card 1 (Marta Kowalski): ADR label 'Ferienhaus' not kept: "
        "the address is a home address"
    ]
    assert kept(household)["Marta Kowalski"]["addresses"] == [
        {"kind": "home", "line1": "Dünenweg 7", "city": "List"},
        {"kind": "home", "line1": "Lindenstraße 3", "city": "Köln"},
        {"kind": "home", "po_box": "Postfach 10 01 22", "city": "Köln"},
        {
            "kind": "home",
            "extended": "c/o Nowak",
            "line1": "Seeweg 1",
            "city": "Plön",
            "region": "Schleswig-Holstein",
        },
        {
            "kind": "work",
            "extended": "Gebäude B, 3. OG",
            "line1": "Werkstraße 12",
            "city": "Köln",
        },
        {"kind": "work", "line1": "Am Hafen 4", "city": "Hamburg"},
    ]


def test_a_card_with_fewer_addresses_of_a_kind_replaces_that_kind_only(household):
    run(CORPUS / "addresses-many.vcf")
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Marta Kowalski\r\n"
        "ADR;TYPE=WORK:;;Neue Straße 1;Bonn;;53111;Deutschland\r\nEND:VCARD\r\n"
    )

    import_vcards(household=household, data=card.encode())

    addresses = kept(household)["Marta Kowalski"]["addresses"]
    assert [(a["kind"], a["city"]) for a in addresses] == [
        ("work", "Bonn"),
        ("home", "List"),
        ("home", "Köln"),
        ("home", "Köln"),
        ("home", "Plön"),
    ]


# Phones


def test_a_cards_phones_are_read_in_the_country_its_address_names(household):
    run(CORPUS / "addresses-many.vcf")

    assert kept(household)["Jim Carter"]["channels"] == [
        ("phone", "+18167399653", "mobil", False),  # not +49 816…
        ("phone", "+49301234567", "privat", False),
    ]


def test_a_number_the_phone_library_cannot_read_is_kept_as_written(household):
    out, err = run(CORPUS / "phones-unreadable.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err == [
        "card 1 (Nadia Perera): TEL '+123456789' kept as written: "
        "not a phone number for region DE",
        "card 1 (Nadia Perera): TEL '+94 (0800) 2255337' kept as written: "
        "not a phone number for region DE",
        "card 1 (Nadia Perera): TEL '+1-800-MYFAX' kept as written: "
        "not a phone number for region DE",
        # Too few digits for a number: a short code is no contact's phone.
        "card 1 (Nadia Perera): TEL '110' ignored: not a phone number for region DE",
    ]
    assert kept(household)["Nadia Perera"]["channels"] == [
        ("phone", "+123456789", "mobil", True),
        ("phone", "+94 (0800) 2255337", "geschäftlich", True),
        ("phone", "+1-800-MYFAX", "Fax", True),
        ("phone", "+491712345678", "mobil", False),
    ]


@pytest.mark.parametrize(
    "query", ["+94 800 2255337", "0800 2255337", "+123456789", "1-800-69329"]
)
def test_a_number_kept_as_written_is_found_by_its_digits(api, household, query):
    run(CORPUS / "phones-unreadable.vcf")

    response = api.call("find_person", {"query": query, "source": "contacts"})

    assert response.status_code == 200, response.json()
    assert [row["display_name"] for row in response.json()["results"]] == [
        "Nadia Perera"
    ]


def test_the_contact_page_shows_what_was_kept(household):
    for name in ("addresses-many.vcf", "person-fields.vcf", "phones-unreadable.vcf"):
        run(CORPUS / name)
    client = Client()
    client.force_login(build_member(household, "ben").profile.user)

    def page(name: str) -> str:
        contact = Contact.objects.get(household=household, display_name=name)
        return client.get(f"/contacts/{contact.pk}/").text

    nadia, sabine, marta = (
        page("Nadia Perera"),
        page("Sabine Roth"),
        page("Marta Kowalski"),
    )
    assert "+94 (0800) 2255337" in nadia
    assert "wie geschrieben, nicht geprüft" in nadia
    for shown in (
        "Oberärztin, Charité, Kardiologie",
        "15. April",
        "11. Juni 2005",
        'href="https://blog.sabine-roth.example"',
    ):
        assert shown in sabine, shown
    for shown in (
        "Postfach Postfach 10 01 22",
        "c/o Nowak",
        "Plön, Schleswig-Holstein",
    ):
        assert shown in marta, shown


# A person's company, title, days, chat ids and web addresses


def test_company_title_days_chat_ids_and_web_addresses_are_kept(household):
    out, err = run(CORPUS / "person-fields.vcf")

    assert out == "found 3: created 3, updated 0, unchanged 0, skipped 0"
    assert err == [
        "card 1 (Sabine Roth): URL 'https://blog.sabine-roth.example' kept "
        "without its label 'Blog'",
        "card 1 (Sabine Roth): not kept: GEO, X-ABDATE",
        "card 2 (Tom Weber): BDAY 'circa 1980' ignored: not a date",
    ]
    book = kept(household)
    assert book["Sabine Roth"] == {
        "organization": "Charité, Kardiologie",
        "title": "Oberärztin",
        "birthday": "--04-15",
        "anniversary": "2005-06-11",
        "urls": ["https://sabine-roth.example", "https://blog.sabine-roth.example"],
        "channels": [
            ("other", "sabine@jabber.example", "Jabber", False),
            ("other", "sabine.roth", "Skype", False),
            ("other", "sabine@hotmail.example", "MSN", False),
            ("other", "sabine.roth@gmail.example", "Google Talk", False),
            ("other", "123456789", "ICQ", False),
        ],
        "addresses": [],
    }
    assert (book["Tom Weber"]["birthday"], book["Tom Weber"]["anniversary"]) == (
        "1979-03-02",
        "--08-20",
    )
    # Apple's omitted year, and its anniversary in an item group.
    assert (book["Ines Fischer"]["birthday"], book["Ines Fischer"]["anniversary"]) == (
        "--11-30",
        "2012-05-05",
    )


def test_export_writes_what_was_kept_and_an_empty_household_reads_it_back(
    household, tmp_path
):
    for name in ("addresses-many.vcf", "person-fields.vcf", "phones-unreadable.vcf"):
        run(CORPUS / name)
    empty = build_household("leer")
    exported = tmp_path / "becker.vcf"

    call_command("export_vcard", household="becker", out=exported)
    out, _ = run(exported, "leer")

    text = exported.read_bytes().decode().replace("\r\n ", "")  # unfolded
    for line in [
        "ORG:Charité\\, Kardiologie",
        "TITLE:Oberärztin",
        "BDAY:--0415",
        "ANNIVERSARY:20050611",
        "BDAY:19790302",
        "URL:https://blog.sabine-roth.example",
        "IMPP:xmpp:sabine@jabber.example",
        "IMPP:skype:sabine.roth",
        "TEL;TYPE=fax:+1-800-MYFAX",
        "ADR;TYPE=home:Postfach 10 01 22;;;Köln;;50441;Deutschland",
        "ADR;TYPE=home:;c/o Nowak;Seeweg 1;Plön;Schleswig-Holstein;24306;Deutschland",
    ]:
        assert f"\r\n{line}\r\n" in text, line
    assert out == "found 6: created 6, updated 0, unchanged 0, skipped 0"
    assert kept(empty) == kept(household)
    # The household's own export read back changes nothing.
    assert run(exported)[0] == "found 6: created 0, updated 0, unchanged 6, skipped 0"


def test_the_bundle_carries_the_new_fields_there_and_back(household):
    for name in ("addresses-many.vcf", "person-fields.vcf", "phones-unreadable.vcf"):
        run(CORPUS / name)
    bundle = export_household(household=household)
    sabine = next(c for c in bundle["contacts"] if c["display_name"] == "Sabine Roth")
    nadia = next(c for c in bundle["contacts"] if c["display_name"] == "Nadia Perera")

    copy = json.loads(json.dumps(bundle))
    copy["household"]["slug"] = "becker-kopie"
    imported = import_household(bundle=copy, replace=False)

    assert {key: sabine[key] for key in ("organization", "title", "birthday")} == {
        "organization": "Charité, Kardiologie",
        "title": "Oberärztin",
        "birthday": "--04-15",
    }
    assert nadia["channels"][0] == {
        "kind": "phone",
        "value": "+123456789",
        "label": "mobil",
        "as_written": True,
    }
    assert "as_written" not in nadia["channels"][3]
    assert kept(imported) == kept(household)
    again = export_household(household=imported)
    assert again["contacts"] == bundle["contacts"]


@pytest.mark.parametrize(
    ("contact", "path"),
    [
        ({"display_name": "Eva", "birthday": "1980-02-30"}, "contacts[0].birthday"),
        (
            {
                "display_name": "Udo",
                "channels": [
                    {"kind": "phone", "value": "Zentrale", "as_written": True}
                ],
            },
            "contacts[0].channels[0].value",
        ),
    ],
    ids=["a day that is none", "a number without digits"],
)
def test_the_bundle_reports_a_bad_day_or_phone_by_its_path(household, contact, path):
    bundle = export_household(household=household)
    bundle["household"]["slug"] = "kaputt"
    bundle["contacts"] = [contact]

    with pytest.raises(BundleError, match=re.escape(path)):
        import_household(bundle=bundle, replace=False)


# Encodings


def test_a_fold_inside_a_utf8_character_is_read_whole(household):
    out, err = run(CORPUS / "folded-utf8.vcf")

    assert (out, err) == ("found 1: created 1, updated 0, unchanged 0, skipped 0", [])
    contact = Contact.objects.get(household=household)
    assert (contact.display_name, contact.first_name, contact.notes) == (
        "Jürgen Weiß",
        "Jürgen",
        "Schlüssel beim Nachbarn \N{EN DASH} Hinterhof",
    )


def test_utf16_without_a_byte_order_mark_is_read(household):
    out, err = run(CORPUS / "utf16-no-bom.vcf")

    assert (out, err) == ("found 1: created 1, updated 0, unchanged 0, skipped 0", [])
    assert list(kept(household)) == ["Zoë Brandt"]


def test_quoted_printable_without_a_charset_is_detected_and_names_the_card(
    household,
):
    out, err = run(CORPUS / "qp-undeclared-cp1252.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err == [
        "Quoted-printable values name no charset and are not UTF-8: read as "
        "Windows-1252; check their accented letters."
    ]
    contact = Contact.objects.get(household=household)
    # Named after its FN, not its email.
    assert (contact.display_name, contact.notes) == (
        "Jürgen Müller",
        "Schöne Grüße \N{EN DASH} bis bald",
    )


def test_quoted_printable_without_a_charset_is_read_in_the_files_charset(
    household,
):
    out, err = run(CORPUS / "qp-undeclared-latin1-file.vcf")

    assert (out, err) == ("found 1: created 1, updated 0, unchanged 0, skipped 0", [])
    assert list(kept(household)) == ["Jörg Bär"]


# The admin


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    assert client.login(username="anna", password="correct-horse-battery")
    return client


def test_the_admins_import_report_names_what_each_card_drops(anna, household):
    upload = SimpleUploadedFile(
        "person-fields.vcf", (CORPUS / "person-fields.vcf").read_bytes()
    )

    response = anna.post(IMPORT_URL, {"file": upload}, follow=True)

    assert "Karte 1 (Sabine Roth): nicht übernommen: GEO, X-ABDATE" in response.text
    assert (
        "Karte 2 (Tom Weber): BDAY &#x27;circa 1980&#x27; ignoriert: kein Datum"
        in response.text
    )


def test_the_admin_form_shows_and_edits_the_new_fields(anna, household):
    contact = build_contact(
        household,
        "Sabine Roth",
        organization="Charité",
        urls=["https://sabine-roth.example"],
        addresses=[{"kind": "home", "po_box": "12 34", "city": "Köln"}],
    )
    url = reverse("admin:contacts_contact_change", args=[contact.pk])
    form = anna.get(url).text
    for name in (
        "organization",
        "title",
        "birthday",
        "anniversary",
        "urls",
        "addresses-0-po_box",
        "addresses-0-extended",
        "addresses-0-region",
        "channels-0-as_written",
    ):
        assert f'name="{name}"' in form, name

    response = anna.post(
        url,
        {
            "display_name": "Sabine Roth",
            "kind": "person",
            "status": "active",
            "organization": "Charité, Kardiologie",
            "title": "Oberärztin",
            "birthday": "--04-15",
            "anniversary": "2005-06-11",
            "urls": "https://sabine-roth.example\r\n\r\nwww.blog.example\r\n",
            "tags": "",
            "aliases-TOTAL_FORMS": "0",
            "aliases-INITIAL_FORMS": "0",
            "channels-TOTAL_FORMS": "1",
            "channels-INITIAL_FORMS": "0",
            "channels-0-kind": "phone",
            "channels-0-value": "+1-800-MYFAX",
            "channels-0-label": "Fax",
            "channels-0-as_written": "on",
            "addresses-TOTAL_FORMS": "1",
            "addresses-INITIAL_FORMS": "1",
            "addresses-0-id": str(contact.addresses.get().pk),
            "addresses-0-contact": str(contact.pk),
            "addresses-0-kind": "home",
            "addresses-0-po_box": "12 34",
            "addresses-0-extended": "Hinterhaus",
            "addresses-0-city": "Köln",
            "addresses-0-region": "NRW",
        },
    )

    assert response.status_code == 302, response.text
    assert kept(household)["Sabine Roth"] == {
        "organization": "Charité, Kardiologie",
        "title": "Oberärztin",
        "birthday": "--04-15",
        "anniversary": "2005-06-11",
        "urls": ["https://sabine-roth.example", "www.blog.example"],
        "channels": [("phone", "+1-800-MYFAX", "Fax", True)],
        "addresses": [
            {
                "kind": "home",
                "po_box": "12 34",
                "extended": "Hinterhaus",
                "city": "Köln",
                "region": "NRW",
            }
        ],
    }
    assert "18006932" in Contact.objects.get(pk=contact.pk).phone_digits


def test_the_admin_form_refuses_a_day_that_is_none(anna, household):
    contact = build_contact(household, "Tom Weber")
    url = reverse("admin:contacts_contact_change", args=[contact.pk])

    response = anna.post(
        url,
        {
            "display_name": "Tom Weber",
            "kind": "person",
            "status": "active",
            "birthday": "1980-02-30",
            "aliases-TOTAL_FORMS": "0",
            "aliases-INITIAL_FORMS": "0",
            "channels-TOTAL_FORMS": "0",
            "channels-INITIAL_FORMS": "0",
            "addresses-TOTAL_FORMS": "0",
            "addresses-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200
    assert "Datum als 1980-04-15 angeben, oder ohne Jahr als --04-15." in response.text
