"""Admin, pages and cards speak the household's language, or the person's own."""

import gettext
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from contacts.carddav.credentials import encrypt_secret
from contacts.models import CardDavAccount
from household.models import UserProfile
from tests.builders import PASSWORD, LoginClient, build_contact, build_member
from yorik.bundles import export_household, import_household
from yorik.cards import create_card
from yorik.tokens import issue_token

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = [
    ROOT / "locale" / "de" / "LC_MESSAGES" / "django.po",
    ROOT / "compose" / "locale" / "de" / "LC_MESSAGES" / "django.po",
]


def logged_in(membership) -> Client:
    client = LoginClient()
    assert client.login(username=membership.profile.username, password=PASSWORD)
    return client


def prefer(membership, language: str) -> None:
    UserProfile.objects.filter(pk=membership.profile_id).update(language=language)


@pytest.fixture
def anna(admin_membership) -> Client:
    return logged_in(admin_membership)


@pytest.fixture
def levi_admin(other_household):
    return build_member(other_household, "dana", role="admin", last_name="Levi")


@pytest.mark.django_db
def test_a_german_household_admin_reads_the_admin_in_german(anna, household):
    build_contact(household, "Gisela Becker")

    index = anna.get(reverse("admin:index"))
    contacts = anna.get(reverse("admin:contacts_contact_changelist"))
    add = anna.get(reverse("admin:contacts_contact_add"))

    assert index.headers["Content-Language"] == "de"
    assert "Adressbuch" in index.content.decode()  # our app's name
    assert "Abmelden" in index.content.decode()  # Django's own
    # Our templates' "Home" is Django's, not the address kind's "Privat".
    assert '<a href="/admin/">Start</a>' in add.content.decode()
    page = contacts.content.decode()
    assert "Kontakt zur Änderung auswählen" in page
    assert "Anzeigename" in page
    assert "zuletzt kontaktiert" in page
    assert "Namen, Beinamen, Beziehungen" in page  # the search help
    assert "vCard importieren" in page
    form = add.content.decode()
    assert "Beziehung" in form
    assert "Kontaktwege" in form
    assert "Person" in form
    assert "Wer das für den Haushalt ist" in form


@pytest.mark.django_db
def test_a_german_household_admin_reads_carddav_and_token_labels_in_german(
    anna, admin_membership, household
):
    account = CardDavAccount.objects.create(
        household=household,
        url="https://dav.example.org/anna/",
        username="anna",
        password_encrypted=encrypt_secret("pw"),
        address_book_url="https://dav.example.org/anna/contacts/",
    )
    issue_token(profile=admin_membership.profile, name="Assistent")

    form = anna.get(
        reverse("admin:contacts_carddavaccount_change", args=[account.pk])
    ).content.decode()
    tokens = anna.get(reverse("admin:yorik_apitoken_changelist")).content.decode()

    assert "Adressbuch-URL" in form
    assert "Kartenformat (vCard-Version)" in form
    assert "Zuletzt abgeglichen am" in form
    assert "Präfix" in tokens
    assert "Zuletzt benutzt am" in tokens
    for page in (form, tokens):
        assert "Yorik-Verwaltung" in page
        assert "Django" not in page
    for english in ("Address book url", "Vcard version", "Last synced at", "Prefix"):
        assert english not in form + tokens


@pytest.mark.django_db
def test_an_english_household_admin_reads_the_admin_in_english(levi_admin):
    page = logged_in(levi_admin).get(reverse("admin:contacts_contact_changelist"))

    assert page.headers["Content-Language"] == "en"
    assert "Select contact to change" in page.content.decode()


@pytest.mark.django_db
def test_a_preferred_language_wins_over_the_households_in_the_admin(
    admin_membership, levi_admin
):
    prefer(admin_membership, "en")
    prefer(levi_admin, "de")

    german_household = logged_in(admin_membership).get(reverse("admin:index"))
    english_household = logged_in(levi_admin).get(reverse("admin:index"))

    assert german_household.headers["Content-Language"] == "en"
    assert "Log out" in german_household.content.decode()
    assert english_household.headers["Content-Language"] == "de"
    assert "Abmelden" in english_household.content.decode()


@pytest.mark.django_db
def test_a_preferred_language_wins_on_pages_and_cards(admin_membership, household):
    contact = build_contact(household, "Gisela Becker")
    card = create_card(
        household=household,
        kind="contact_picker",
        payload={"query": "", "ranked": False, "picks": [{"contact_id": contact.pk}]},
        created_by=admin_membership.profile,
        pick_to_chat=False,
    )
    client = logged_in(admin_membership)
    german = client.get(f"/contacts/{contact.pk}/")
    assert german.headers["Content-Language"] == "de"

    prefer(admin_membership, "en")
    page = client.get(f"/contacts/{contact.pk}/")
    card_page = client.get(card.get_absolute_url())

    assert page.headers["Content-Language"] == "en"
    assert "Channels" in page.content.decode()
    assert card_page.headers["Content-Language"] == "en"
    assert "Which contact?" in card_page.content.decode()


@pytest.mark.django_db
def test_the_login_page_follows_the_browser(client):
    german = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9")
    english = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en-GB")
    admin_login = client.get(reverse("admin:login"), HTTP_ACCEPT_LANGUAGE="de")

    assert "Anmelden" in german.content.decode()
    assert "Log in" in english.content.decode()
    assert "Anmelden" in admin_login.content.decode()


@pytest.mark.django_db
def test_german_admin_pages_write_dates_the_german_way(anna, household):
    build_contact(
        household,
        "Gisela Becker",
        last_contacted_at=datetime(2026, 10, 1, 10, 0, tzinfo=UTC),
    )

    page = anna.get(reverse("admin:contacts_contact_changelist")).content.decode()

    assert "1. Oktober 2026" in page


@pytest.mark.django_db
def test_phones_are_national_at_home_and_international_abroad(
    anna, household, admin_membership
):
    build_member(household, "jonas", phone="030 1234567")
    build_member(household, "noa", phone="+972 50 123 4567")
    build_contact(
        household,
        "Gisela Becker",
        channels=[{"kind": "phone", "value": "+49 30 7654321"}],
    )
    contact_id = household.contacts.get().pk

    people = anna.get(reverse("admin:household_userprofile_changelist"))
    detail = anna.get(f"/contacts/{contact_id}/")

    assert "030 1234567" in people.content.decode()
    assert "+972 50-123-4567" in people.content.decode()
    assert "030 7654321" in detail.content.decode()


def catalog_entries(path: Path) -> list[tuple[str, str, bool]]:
    """Return (msgid, msgstr, fuzzy) of every entry but the header."""
    entries = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        fuzzy = bool(re.search(r"^#,.*\bfuzzy\b", block, re.M))
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            match = re.match(r'^(msgid|msgstr(?:\[0\])?|msgid_plural) "(.*)"$', line)
            if match:
                key = match.group(1)
                fields[key] = match.group(2)
            elif line.startswith('"') and key:
                fields[key] += line[1:-1]
        if fields.get("msgid"):
            msgstr = fields.get("msgstr", fields.get("msgstr[0]", ""))
            entries.append((fields["msgid"], msgstr, fuzzy))
    return entries


@pytest.mark.parametrize("path", CATALOGS, ids=lambda path: str(path.parent))
def test_every_german_text_is_translated_and_compiled(path):
    entries = catalog_entries(path)
    compiled = gettext.GNUTranslations(path.with_suffix(".mo").open("rb"))

    assert entries
    assert [msgid for msgid, _, fuzzy in entries if fuzzy] == []
    assert [msgid for msgid, msgstr, _ in entries if not msgstr] == []
    # The .mo file is committed: it must hold what the .po says.
    compiled_ids = {
        (key[0] if isinstance(key, tuple) else key).split("\x04")[-1]: value
        for key, value in compiled._catalog.items()
    }
    plain = [(msgid, msgstr) for msgid, msgstr, _ in entries if "\\" not in msgid]
    assert [msgid for msgid, _ in plain if msgid not in compiled_ids] == []


@pytest.mark.django_db
def test_the_bundle_keeps_a_preferred_language(household, admin_membership):
    build_member(household, "jonas")
    prefer(admin_membership, "en")
    bundle = export_household(household=household)

    import_household(bundle=bundle, replace=True)

    people = {person["username"]: person for person in bundle["people"]}
    assert people["anna"]["language"] == "en"
    assert "language" not in people["jonas"]
    assert UserProfile.objects.get(username="anna").language == "en"
    assert UserProfile.objects.get(username="jonas").language == ""
