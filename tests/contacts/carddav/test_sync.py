"""CardDAV sync, both ways, against a real Radicale 3 server on a loopback port."""

import dataclasses
import io
import re
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from django.core.management import CommandError, call_command
from django.db import connections
from django.urls import reverse

from contacts.carddav.accounts import account_password
from contacts.carddav.client import CardDavClient
from contacts.carddav.credentials import encrypt_secret
from contacts.carddav.sync import SYNC_LOCK, sync_carddav
from contacts.models import CardDavAccount, CardDavCard, Contact, ContactStatus
from tests.builders import PASSWORD, build_contact
from tests.contacts.carddav.radicale import Phone, Radicale, vcard

pytest.importorskip(
    "radicale", reason="Radicale is not installed: the CardDAV sync tests need it"
)

pytestmark = pytest.mark.django_db

ANNA = "TEL;TYPE=CELL:+49 170 1111111"
BERND = "TEL;TYPE=CELL:+49 170 2222222"


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    """Radicale listens on loopback, which CardDAV refuses by default."""
    settings.YORIK_CARDDAV_ALLOW_PRIVATE = True


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Radicale:
    radicale = Radicale(tmp_path_factory.mktemp("radicale")).start()
    yield radicale
    radicale.stop()


@pytest.fixture
def phone(server) -> Phone:
    return server.new_user()


def connect(household, phone: Phone, monkeypatch, *, url: str | None = None) -> str:
    monkeypatch.setenv("CARDDAV_TEST_PASSWORD", phone.password)
    out = io.StringIO()
    call_command(
        "carddav_account",
        household=household.slug,
        url=url or phone.book,
        username=phone.user,
        password_env="CARDDAV_TEST_PASSWORD",
        stdout=out,
    )
    return out.getvalue()


def sync(household, **options):
    account = CardDavAccount.objects.get(household=household)
    report = sync_carddav(account=account, **options)
    assert not report.error, report.error
    return report


def contact(household, name: str) -> Contact:
    return Contact.objects.get(household=household, display_name=name)


def phones_of(found: Contact) -> list[str]:
    return [c.value for c in found.channels.filter(kind="phone")]


def card_of(phone: Phone, name: str) -> str:
    """Return the server's card whose FN is name."""
    for file_name in phone.names():
        text = phone.get(file_name)
        if f"FN:{name}\n" in text.replace("\r\n", "\n"):
            return text
    raise AssertionError(f"no card of {name}")


# Accounts


@pytest.mark.parametrize(
    "path",
    ["", "not/dav/"],
    ids=["server root", "a page that is no address book: /.well-known/carddav"],
)
def test_the_account_command_finds_the_book_from_the_server_url(
    household, phone, monkeypatch, path
):
    out = connect(household, phone, monkeypatch, url=f"{phone.server.url}{path}")

    account = CardDavAccount.objects.get(household=household)
    assert account.address_book_url == phone.book
    assert "Stored the CardDAV account" in out
    assert phone.password not in account.password_encrypted
    assert account_password(account) == phone.password


def test_a_wrong_password_stores_nothing(household, phone, monkeypatch):
    monkeypatch.setenv("WRONG", "not-the-password")

    with pytest.raises(CommandError, match="refused the login"):
        call_command(
            "carddav_account",
            household=household.slug,
            url=phone.book,
            username=phone.user,
            password_env="WRONG",
        )

    assert not CardDavAccount.objects.exists()


@pytest.mark.parametrize("url", ["not a url", "ftp://dav.example.org/"])
def test_a_bad_url_is_refused_before_any_request(household, url):
    with pytest.raises(CommandError, match="--url: Enter a valid URL"):
        call_command(
            "carddav_account", household=household.slug, url=url, username="anna"
        )

    assert not CardDavAccount.objects.exists()


def test_the_password_is_read_from_standard_input(household, phone, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{phone.password}\n"))

    call_command(
        "carddav_account",
        household=household.slug,
        url=phone.book,
        username=phone.user,
        stdout=io.StringIO(),
    )

    account = CardDavAccount.objects.get(household=household)
    assert account_password(account) == phone.password


def test_a_household_without_an_account_is_told_how_to_add_one(household):
    with pytest.raises(CommandError, match="carddav_account"):
        call_command("sync_carddav", household=household.slug)


# Both ways


def test_first_sync_goes_both_ways_and_a_second_does_nothing(
    household, phone, monkeypatch
):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA, "NOTE:Nachbarin"))
    phone.put("bernd.vcf", vcard("Bernd Kurz", BERND))
    # Bernd is in Yorik already, known by his phone: one contact, not two.
    build_contact(
        household,
        "Bernd Kurz",
        relation="Onkel",
        channels=[{"kind": "phone", "value": "+491702222222"}],
    )
    build_contact(
        household,
        "Carla Sommer",
        channels=[{"kind": "email", "value": "carla@example.org"}],
    )
    connect(household, phone, monkeypatch)

    out = io.StringIO()
    call_command("sync_carddav", household=household.slug, stdout=out)

    assert "pulled 2, pushed 2, conflicts 0, archived 0, skipped 0" in out.getvalue()
    assert Contact.objects.filter(household=household).count() == 3
    assert contact(household, "Anna Roth").notes == "Nachbarin"
    assert len(phone.names()) == 3
    carla = card_of(phone, "Carla Sommer")
    assert "carla@example.org" in carla
    assert "VERSION:3.0" in carla  # Radicale offers vCard 3.0 only.
    assert "X-YORIK-RELATION:Onkel" in card_of(phone, "Bernd Kurz")

    again = sync(household)

    assert str(again) == "pulled 0, pushed 0, conflicts 0, archived 0, skipped 0"
    assert again.cards_downloaded == 0


def test_an_edit_on_each_side_reaches_the_other(household, phone, monkeypatch):
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, uid="anna"))
    phone.put("bernd.vcf", vcard("Bernd Kurz", BERND, uid="bernd"))
    connect(household, phone, monkeypatch)
    sync(household)

    phone.put(
        "anna.vcf",
        vcard("Anna Roth", "TEL;TYPE=CELL:+49 170 9999999", uid="anna"),
        etag=etag,
    )
    bernd = contact(household, "Bernd Kurz")
    bernd.notes = "Schuldet uns 20 Euro"
    bernd.save()
    report = sync(household)

    assert (report.pulled, report.pushed, report.conflicts) == (1, 1, [])
    assert phones_of(contact(household, "Anna Roth")) == ["+491709999999"]
    assert "NOTE:Schuldet uns 20 Euro" in phone.get("bernd.vcf")
    assert str(sync(household)).startswith("pulled 0, pushed 0")


def test_a_conflicting_edit_keeps_the_servers_value_and_notes_yoriks(
    household, phone, monkeypatch
):
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, "NOTE:alt", uid="anna"))
    connect(household, phone, monkeypatch)
    sync(household)
    # The phone changes the number and the note; Yorik the number and relation.
    phone.put(
        "anna.vcf",
        vcard("Anna Roth", "TEL:+49 170 3333333", "NOTE:neu", uid="anna"),
        etag=etag,
    )
    anna = contact(household, "Anna Roth")
    anna.channels.update(value="+491704444444")
    anna.relation = "Cousine"
    anna.save()

    report = sync(household)

    anna = contact(household, "Anna Roth")
    # The report is in the active language (English here); the notes are
    # stored, so in the household's (German).
    assert report.conflicts == ["Anna Roth: phones"]
    assert phones_of(anna) == ["+491703333333"]
    assert anna.notes.startswith(
        "neu\n\nTelefonnummern in Yorik vor dem CardDAV-Abgleich vom "
    )
    assert "+491704444444" in anna.notes
    assert anna.relation == "Cousine"
    card = phone.get("anna.vcf")
    assert "X-YORIK-RELATION:Cousine" in card
    assert "+49 170 3333333" in card or "+491703333333" in card


def test_a_changed_card_yorik_cannot_store_is_skipped_and_the_rest_synced(
    household, phone, monkeypatch
):
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, uid="anna"))
    bernd_etag = phone.put("bernd.vcf", vcard("Bernd Kurz", BERND, uid="bernd"))
    connect(household, phone, monkeypatch)
    sync(household)
    phone.put(
        "anna.vcf",
        vcard("Anna Roth", ANNA, f"NICKNAME:{'A' * 250}", uid="anna"),
        etag=etag,
    )
    phone.put(
        "bernd.vcf",
        vcard("Bernd Kurz", BERND, "NOTE:neu", uid="bernd"),
        etag=bernd_etag,
    )

    report = sync(household)

    assert report.pulled == 1
    assert len(report.skipped) == 1
    assert report.skipped[0].startswith("/user")
    assert "anna.vcf" in report.skipped[0]
    assert contact(household, "Anna Roth").aliases.count() == 0
    assert contact(household, "Bernd Kurz").notes == "neu"


def test_a_card_deleted_on_the_server_archives_its_contact(
    household, phone, monkeypatch
):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA))
    connect(household, phone, monkeypatch)
    sync(household)

    phone.delete("anna.vcf")
    report = sync(household)

    assert report.archived == 1
    assert contact(household, "Anna Roth").status == ContactStatus.ARCHIVED
    # Archived contacts are not written back.
    assert phone.names() == []
    assert str(sync(household)).startswith("pulled 0, pushed 0")


def test_a_server_without_sync_collection_is_synced_by_its_etags(
    household, phone, monkeypatch
):
    """The PROPFIND fallback, against Radicale told to hide sync-collection."""
    describe = CardDavClient.describe
    monkeypatch.setattr(
        CardDavClient,
        "describe",
        lambda self, url: dataclasses.replace(describe(self, url), supports_sync=False),
    )
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, uid="anna"))
    phone.put("bernd.vcf", vcard("Bernd Kurz", BERND, uid="bernd"))
    connect(household, phone, monkeypatch)
    assert sync(household).pulled == 2

    phone.put("anna.vcf", vcard("Anna Roth", ANNA, "NOTE:neu", uid="anna"), etag=etag)
    phone.delete("bernd.vcf")
    report = sync(household)

    assert (report.pulled, report.archived, report.cards_downloaded) == (1, 1, 1)
    assert contact(household, "Anna Roth").notes == "neu"
    assert contact(household, "Bernd Kurz").status == ContactStatus.ARCHIVED
    assert CardDavAccount.objects.get(household=household).sync_token == ""
    again = sync(household)
    assert (again.pulled, again.pushed, again.cards_downloaded) == (0, 0, 0)


def test_properties_yorik_does_not_model_survive_its_push(
    household, phone, monkeypatch
):
    phone.put(
        "anna.vcf",
        vcard(
            "Anna Roth",
            "item1.TEL:+49 170 1111111",
            "item1.X-ABLabel:Dienst",
            "item2.X-ABRELATEDNAMES:Karl Roth",
            "item2.X-ABLabel:_$!<Spouse>!$_",
            "BDAY:1980-02-03",
            "ORG:Stadtwerke;Vertrieb",
            "TITLE:Leiterin",
            "X-SOCIALPROFILE;type=mastodon:https://example.social/@anna",
            "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQ"
            "gKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/",
            uid="anna",
        ),
    )
    connect(household, phone, monkeypatch)
    sync(household)
    anna = contact(household, "Anna Roth")
    anna.notes = "Geburtstag feiern"
    anna.save()

    assert sync(household).pushed == 1

    card = phone.get("anna.vcf").replace("\r\n ", "").replace("\n ", "")
    for kept in [
        "X-ABRELATEDNAMES:Karl Roth",
        "X-ABLabel:_$!<Spouse>!$_",
        "BDAY:1980-02-03",
        "ORG:Stadtwerke;Vertrieb",
        "TITLE:Leiterin",
        "X-SOCIALPROFILE;type=mastodon:https://example.social/@anna",
        "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ",
        "UID:anna",
        "NOTE:Geburtstag feiern",
    ]:
        assert kept.lower() in card.lower(), kept
    assert card.count("X-ABRELATEDNAMES") == 1
    assert card.lower().count("x-ablabel") == 2  # Dienst and the spouse
    # Read back, the card is the same contact: nothing to pull.
    assert str(sync(household)).startswith("pulled 0, pushed 0")
    assert phones_of(contact(household, "Anna Roth")) == ["+491701111111"]


SABINE = [
    "ORG:Charité;Kardiologie",
    "TITLE:Oberärztin",
    "BDAY:--04-15",
    "X-ANNIVERSARY:2005-06-11",
    "X-JABBER:sabine@jabber.example",
    "URL:https://sabine-roth.example",
    "TEL;TYPE=WORK:+94 (0800) 2255337",
    "ADR;TYPE=HOME:Postfach 12 34;;;Köln;;50441;Deutschland",
    "ADR;TYPE=HOME:;c/o Nowak;Seeweg 1;Plön;Schleswig-Holstein;24306;Deutschland",
]


def synced_fields(found: Contact) -> dict:
    return {
        "organization": found.organization,
        "title": found.title,
        "birthday": found.birthday,
        "anniversary": found.anniversary,
        "urls": found.urls,
        "channels": [
            (c.kind, c.value, c.label, c.as_written)
            for c in found.channels.order_by("pk")
        ],
        "addresses": [
            (a.po_box, a.extended, a.line1, a.city, a.region)
            for a in found.addresses.order_by("pk")
        ],
    }


def test_a_persons_company_days_chat_ids_and_addresses_go_both_ways(
    household, phone, monkeypatch
):
    phone.put("sabine.vcf", vcard("Sabine Roth", *SABINE, uid="sabine"))
    connect(household, phone, monkeypatch)
    sync(household)
    sabine = contact(household, "Sabine Roth")
    pulled = synced_fields(sabine)
    assert pulled == {
        "organization": "Charité, Kardiologie",
        "title": "Oberärztin",
        "birthday": "--04-15",
        "anniversary": "2005-06-11",
        "urls": ["https://sabine-roth.example"],
        # In the order Radicale keeps a card's lines.
        "channels": [
            ("phone", "+94 (0800) 2255337", "geschäftlich", True),
            ("other", "sabine@jabber.example", "Jabber", False),
        ],
        "addresses": [
            ("Postfach 12 34", "", "", "Köln", ""),
            ("", "c/o Nowak", "Seeweg 1", "Plön", "Schleswig-Holstein"),
        ],
    }

    # An edit in Yorik is pushed with everything else the contact keeps.
    sabine.title = "Chefärztin"
    sabine.birthday = "1975-04-15"
    sabine.save()
    assert sync(household).pushed == 1

    card = card_of(phone, "Sabine Roth").replace("\r\n ", "")
    for line in [
        "ORG:Charité;Kardiologie",
        "TITLE:Chefärztin",
        "BDAY:1975-04-15",
        "X-ANNIVERSARY:2005-06-11",
        "IMPP:xmpp:sabine@jabber.example",
        "URL:https://sabine-roth.example",
        "TEL;TYPE=work:+94 (0800) 2255337",
        "Postfach 12 34",
        "Schleswig-Holstein",
    ]:
        assert line in card, line
    # Read back, the card is the same contact: nothing to pull, nothing to push.
    assert str(sync(household)).startswith("pulled 0, pushed 0")
    assert synced_fields(contact(household, "Sabine Roth")) == pulled | {
        "title": "Chefärztin",
        "birthday": "1975-04-15",
    }


def test_a_card_synced_before_yorik_read_its_fields_keeps_them_at_the_next_push(
    household, phone, monkeypatch
):
    phone.put("sabine.vcf", vcard("Sabine Roth", *SABINE, uid="sabine"))
    connect(household, phone, monkeypatch)
    sync(household)
    # As a sync that did not read them left the card's state and its contact.
    state = CardDavCard.objects.get(household=household)
    for key in ("organization", "title", "birthday", "anniversary", "urls"):
        del state.document[key]
    state.document["addresses"] = state.document["addresses"][:1]
    state.save()
    Contact.objects.filter(pk=state.contact_id).update(
        organization="", title="", birthday="", anniversary="", urls=[]
    )
    Contact.objects.get(pk=state.contact_id).addresses.order_by("pk")[1].delete()
    sabine = contact(household, "Sabine Roth")
    sabine.notes = "Kongress im Mai"
    sabine.save()

    report = sync(household)

    assert (report.pushed, report.conflicts) == (1, [])
    sabine = contact(household, "Sabine Roth")
    assert (sabine.organization, sabine.birthday, sabine.notes) == (
        "Charité, Kardiologie",
        "--04-15",
        "Kongress im Mai",
    )
    assert sabine.addresses.count() == 2
    card = card_of(phone, "Sabine Roth").replace("\r\n ", "")
    for line in ["ORG:Charité;Kardiologie", "BDAY:--04-15", "Seeweg 1"]:
        assert line in card, line


def test_a_card_changed_between_listing_and_push_is_pulled_and_pushed_again(
    household, phone, monkeypatch
):
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, uid="anna"))
    connect(household, phone, monkeypatch)
    sync(household)
    anna = contact(household, "Anna Roth")
    anna.notes = "aus Yorik"
    anna.save()

    class PhoneEditsFirst(requests.Session):
        """The phone saves Anna's card just before Yorik's first PUT."""

        edited = False

        def request(self, method, url, *args, **kwargs):
            if method == "PUT" and not self.edited:
                self.edited = True
                phone.put(
                    "anna.vcf",
                    vcard("Anna Roth", ANNA, "TITLE:Ärztin", uid="anna"),
                    etag=etag,
                )
            return super().request(method, url, *args, **kwargs)

    report = sync(household, session=PhoneEditsFirst())

    assert (report.pushed, report.skipped) == (1, [])
    card = phone.get("anna.vcf")
    assert "TITLE:Ärztin" in card
    assert "NOTE:aus Yorik" in card


# Faults


def test_a_server_that_goes_away_mid_sync_leaves_nothing_half_done(
    household, tmp_path, monkeypatch
):
    server = Radicale(tmp_path / "radicale").start()
    try:
        phone = server.new_user()
        phone.fill([vcard(f"Person{n} Muster", uid=f"p{n}") for n in range(150)])
        build_contact(household, "Nur In Yorik")
        connect(household, phone, monkeypatch)

        class GoesAway(requests.Session):
            """The server stops after the first batch of cards was fetched."""

            reports = 0

            def request(self, method, url, *args, **kwargs):
                if method == "REPORT":
                    self.reports += 1
                    if self.reports == 3:  # sync-collection, then two multigets
                        server.stop()
                return super().request(method, url, *args, **kwargs)

        account = CardDavAccount.objects.get(household=household)
        report = sync_carddav(account=account, session=GoesAway())

        assert "could not be reached" in report.error
        account.refresh_from_db()
        assert account.sync_token == ""
        # New cards are imported together once fetched: none is in yet.
        assert (report.pulled, report.pushed) == (0, 0)
        assert not CardDavCard.objects.exists()
        assert list(
            Contact.objects.filter(household=household).values_list(
                "display_name", "vcard_uid"
            )
        ) == [("Nur In Yorik", "")]

        server.start()
        resumed = sync(household)

        assert (resumed.pulled, resumed.pushed) == (150, 1)
        assert Contact.objects.filter(household=household).count() == 151
        assert len(phone.names()) == 151
        assert str(sync(household)).startswith("pulled 0, pushed 0")
    finally:
        server.stop()


def test_a_server_that_goes_away_while_pushing_resumes_where_it_stopped(
    household, tmp_path, monkeypatch
):
    server = Radicale(tmp_path / "radicale").start()
    try:
        phone = server.new_user()
        etag = phone.put("a.vcf", vcard("Anna Roth", ANNA, uid="a"))
        phone.put("b.vcf", vcard("Bernd Kurz", BERND, uid="b"))
        phone.put("c.vcf", vcard("Carla Sommer", uid="c"))
        connect(household, phone, monkeypatch)
        sync(household)
        account = CardDavAccount.objects.get(household=household)
        token = account.sync_token
        phone.put(
            "a.vcf", vcard("Anna Roth", ANNA, "NOTE:vom Telefon", uid="a"), etag=etag
        )
        for name in ["Bernd Kurz", "Carla Sommer"]:
            Contact.objects.filter(display_name=name).update(notes="aus Yorik")

        class GoesAway(requests.Session):
            """The server stops before Yorik's second PUT."""

            puts = 0

            def request(self, method, url, *args, **kwargs):
                if method == "PUT":
                    self.puts += 1
                    if self.puts == 2:
                        server.stop()
                return super().request(method, url, *args, **kwargs)

        report = sync_carddav(account=account, session=GoesAway())

        assert "could not be reached" in report.error
        assert (report.pulled, report.pushed) == (1, 1)
        account.refresh_from_db()
        assert account.sync_token == token
        assert contact(household, "Anna Roth").notes == "vom Telefon"

        server.start()
        resumed = sync(household)

        assert (resumed.pulled, resumed.pushed, resumed.cards_downloaded) == (0, 1, 0)
        assert "NOTE:aus Yorik" in phone.get("b.vcf")
        assert "NOTE:aus Yorik" in phone.get("c.vcf")
    finally:
        server.stop()


def test_a_sync_whose_time_is_up_stops_cleanly_and_the_next_resumes(
    household, phone, monkeypatch, settings
):
    phone.fill([vcard(f"Person{n} Muster", uid=f"p{n}") for n in range(150)])
    build_contact(household, "Nur In Yorik")
    connect(household, phone, monkeypatch)
    settings.YORIK_CARDDAV_SYNC_DEADLINE = 0.5

    class Slow(requests.Session):
        """The second batch of cards is asked for when the sync's time is up."""

        reports = 0

        def request(self, method, url, *args, **kwargs):
            if method == "REPORT":
                self.reports += 1
                if self.reports == 3:  # sync-collection, then two multigets
                    time.sleep(0.5)
            return super().request(method, url, *args, **kwargs)

    account = CardDavAccount.objects.get(household=household)
    report = sync_carddav(account=account, session=Slow())

    assert report.error.endswith("the time allowed (0.5 s) is up")
    account.refresh_from_db()
    assert account.sync_token == ""
    assert (report.pulled, report.pushed) == (0, 0)
    assert not CardDavCard.objects.exists()
    assert list(
        Contact.objects.filter(household=household).values_list(
            "display_name", "vcard_uid"
        )
    ) == [("Nur In Yorik", "")]

    settings.YORIK_CARDDAV_SYNC_DEADLINE = 300
    resumed = sync(household)

    assert (resumed.pulled, resumed.pushed) == (150, 1)
    assert str(sync(household)).startswith("pulled 0, pushed 0")


def test_a_5xx_answer_stops_the_sync_and_the_command_says_so(
    household, phone, monkeypatch
):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA))
    connect(household, phone, monkeypatch)

    class Fails(requests.Session):
        def request(self, method, url, *args, **kwargs):
            if method == "REPORT":
                response = requests.Response()
                response.status_code = 503
                return response
            return super().request(method, url, *args, **kwargs)

    account = CardDavAccount.objects.get(household=household)
    report = sync_carddav(account=account, session=Fails())

    assert "503" in report.error
    assert not Contact.objects.filter(household=household).exists()
    assert not CardDavCard.objects.exists()


# Many cards and isolation


def test_a_large_book_syncs_once_and_a_no_change_resync_fetches_no_card(
    household, phone, monkeypatch
):
    phone.fill(
        [
            vcard(f"Person{n} Muster", f"TEL:+49 30 {1000000 + n}", uid=f"p{n}")
            for n in range(200)
        ]
    )
    connect(household, phone, monkeypatch)

    started = time.monotonic()
    first = sync(household)
    first_seconds = time.monotonic() - started
    again = sync(household)

    assert (first.pulled, first.pushed, first.skipped) == (200, 0, [])
    assert first.cards_downloaded == 200
    assert again.cards_downloaded == 0
    # PROPFIND of the book's features, then one sync-collection.
    assert again.requests == 2
    assert first_seconds < 30


def test_one_households_sync_never_touches_anothers_contacts(
    household, other_household, server, monkeypatch
):
    ours, theirs = server.new_user(), server.new_user()
    ours.put("anna.vcf", vcard("Anna Roth", ANNA, uid="shared-uid"))
    # The other household has a contact with the same UID and phone.
    build_contact(
        other_household,
        "Anna Roth",
        vcard_uid="shared-uid",
        channels=[{"kind": "phone", "value": "+491701111111"}],
    )
    build_contact(other_household, "Dov Levi")
    connect(household, ours, monkeypatch)
    connect(other_household, theirs, monkeypatch)
    before = sorted(
        Contact.objects.filter(household=other_household).values_list(
            "pk", "display_name", "status", "updated_at"
        )
    )

    report = sync(household)

    assert (report.pulled, report.pushed) == (1, 0)
    assert contact(household, "Anna Roth").vcard_uid == "shared-uid"
    after = sorted(
        Contact.objects.filter(household=other_household).values_list(
            "pk", "display_name", "status", "updated_at"
        )
    )
    assert after == before
    assert theirs.names() == []
    assert ours.names() == ["anna.vcf"]


def test_the_bundle_carries_no_carddav_account(household, phone, monkeypatch):
    connect(household, phone, monkeypatch)
    out = io.StringIO()

    call_command("export_household", household.slug, stdout=out)

    assert phone.user not in out.getvalue()
    assert "carddav" not in out.getvalue().lower()


def test_radicale_is_a_real_server(server):
    answer = requests.request("OPTIONS", server.url, timeout=10)
    assert "addressbook" in answer.headers.get("DAV", "")
    assert Path(server.folder, "collections").exists()


# Admin


@pytest.fixture
def anna(client, admin_membership):
    """A client logged in as the Becker household's admin."""
    assert client.login(username="anna", password=PASSWORD)
    return client


def test_a_household_admin_adds_the_account_and_never_sees_the_password_again(
    anna, household, phone
):
    response = anna.post(
        reverse("admin:contacts_carddavaccount_add"),
        {"url": phone.server.url, "username": phone.user, "password": phone.password},
    )

    assert response.status_code == 302, response.content.decode()
    account = CardDavAccount.objects.get(household=household)
    assert account.address_book_url == phone.book
    page = anna.get(
        reverse("admin:contacts_carddavaccount_change", args=[account.pk])
    ).content.decode()
    assert phone.password not in page
    assert account.password_encrypted not in page
    assert 'name="password"' in page


def test_an_unchanged_account_saved_without_a_password_keeps_the_stored_one(
    anna, household, phone, monkeypatch
):
    connect(household, phone, monkeypatch)
    account = CardDavAccount.objects.get(household=household)

    response = anna.post(
        reverse("admin:contacts_carddavaccount_change", args=[account.pk]),
        {"url": account.url, "username": phone.user, "password": ""},
    )

    assert response.status_code == 302, response.content.decode()
    account.refresh_from_db()
    assert account_password(account) == phone.password


def test_the_admin_refuses_a_wrong_password_and_stores_nothing(anna, phone):
    response = anna.post(
        reverse("admin:contacts_carddavaccount_add"),
        {"url": phone.book, "username": phone.user, "password": "wrong"},
    )

    assert response.status_code == 200
    assert "Der Server hat die Anmeldung abgelehnt (401)" in response.content.decode()
    assert not CardDavAccount.objects.exists()


@contextmanager
def another_sync_running(account):
    """Hold the account's sync lock from another connection, as another
    process's sync would, while the body runs."""
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def other_run():
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", (SYNC_LOCK, account.pk))
            held.set()
            release.wait(10)
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (SYNC_LOCK, account.pk))
        connections["default"].close()
        done.set()

    threading.Thread(target=other_run).start()
    held.wait(10)
    try:
        yield
    finally:
        release.set()
        done.wait(10)


def sync_in_admin(client, household) -> str:
    """Run the admin's sync action on the household's account; return the page."""
    account = CardDavAccount.objects.get(household=household)
    response = client.post(
        reverse("admin:contacts_carddavaccount_changelist"),
        {"action": "sync_now", "_selected_action": [account.pk]},
        follow=True,
    )
    return response.content.decode()


def test_the_admin_action_syncs_and_reports(anna, household, phone, monkeypatch):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA))
    connect(household, phone, monkeypatch)

    text = sync_in_admin(anna, household)

    assert "1 geholt, 0 übertragen, 0 Konflikte, 0 archiviert, 0 übersprungen" in text
    assert contact(household, "Anna Roth")


def test_the_admin_action_says_why_the_importer_skipped_a_new_card(
    anna, household, phone, monkeypatch
):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA, f"NICKNAME:{'A' * 250}"))
    phone.put("bernd.vcf", vcard("Bernd Kurz", BERND))
    connect(household, phone, monkeypatch)

    text = sync_in_admin(anna, household)

    assert "1 geholt, 0 übertragen, 0 Konflikte, 0 archiviert, 1 übersprungen" in text
    # The importer's own reason, in the admin's language, by the card's href.
    assert re.search(r"Übersprungen: /\S+/anna\.vcf: Karte \d \(Anna Roth\): ", text)
    assert "the importer skipped it" not in text
    assert contact(household, "Bernd Kurz")


def test_the_admin_action_reports_a_conflict_in_german(
    anna, household, phone, monkeypatch
):
    etag = phone.put("anna.vcf", vcard("Anna Roth", ANNA, uid="anna"))
    connect(household, phone, monkeypatch)
    sync(household)
    phone.put(
        "anna.vcf",
        vcard("Anna Roth", BERND, "X-YORIK-STATUS:pending", uid="anna"),
        etag=etag,
    )
    ours = Contact.objects.get(household=household)
    ours.channels.update(value="+491704444444")
    Contact.objects.filter(pk=ours.pk).update(status=ContactStatus.ARCHIVED)

    text = sync_in_admin(anna, household)

    assert (
        "Konflikt, der Wert des Servers bleibt: Anna Roth: Status, Telefonnummern"
        in text
    )
    notes = contact(household, "Anna Roth").notes
    day = r"\d{4}-\d\d-\d\d"
    assert re.search(
        rf"Status in Yorik vor dem CardDAV-Abgleich vom {day}: Archiviert", notes
    )
    assert re.search(
        rf"Telefonnummern in Yorik vor dem CardDAV-Abgleich vom {day}: "
        r"\+491704444444 \(\w+\)",
        notes,
    )
    assert "phones" not in text + notes


def test_the_admin_action_says_in_german_that_the_server_is_unreachable(
    anna, household
):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/anna/contacts/"
    CardDavAccount.objects.create(
        household=household,
        url=closed,
        username="anna",
        password_encrypted=encrypt_secret("pw"),
        address_book_url=closed,
    )

    text = sync_in_admin(anna, household)

    assert (
        "Der Server des Adressbuchs war nicht erreichbar (die Verbindung wurde "
        "abgelehnt oder abgebrochen)." in text
    )
    assert "Error" not in text
    assert "PROPFIND" not in text


def test_the_admin_action_says_in_german_that_another_sync_is_running(
    anna, household, phone, monkeypatch
):
    connect(household, phone, monkeypatch)

    with another_sync_running(CardDavAccount.objects.get(household=household)):
        text = sync_in_admin(anna, household)

    assert "ein anderer Abgleich dieses Haushalts läuft gerade" in text


def test_a_sync_started_while_another_runs_stops_and_changes_nothing(
    household, phone, monkeypatch
):
    phone.put("anna.vcf", vcard("Anna Roth", ANNA))
    connect(household, phone, monkeypatch)
    account = CardDavAccount.objects.get(household=household)

    with another_sync_running(account):
        report = sync_carddav(account=account)

    assert report.error == "another sync of this household is running"
    assert not Contact.objects.filter(household=household).exists()
    assert sync(household).pulled == 1


def test_the_command_fails_saying_what_was_done_when_the_server_is_gone(household):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/anna/contacts/"
    CardDavAccount.objects.create(
        household=household,
        url=closed,
        username="anna",
        password_encrypted=encrypt_secret("pw"),
        address_book_url=closed,
    )

    with pytest.raises(CommandError) as failure:
        call_command("sync_carddav", household=household.slug)

    message = str(failure.value)
    assert "could not be reached" in message
    assert "pulled 0, pushed 0" in message
    assert "run again to resume" in message
