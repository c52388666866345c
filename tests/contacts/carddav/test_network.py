"""Where CardDAV requests may go, what they carry, and how long they may take."""

import html
import io
import ipaddress
import time

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from contacts.carddav.accounts import account_password
from contacts.carddav.credentials import encrypt_secret
from contacts.carddav.network import is_public_address
from contacts.carddav.sync import sync_carddav
from contacts.models import CardDavAccount
from tests.builders import PASSWORD, build_member
from tests.contacts.carddav.http_servers import (
    Certificate,
    closed_port_url,
    recording_server,
    self_signed_certificate,
    trickling_server,
)

pytestmark = pytest.mark.django_db

STORED = "stored-secret"


@pytest.fixture
def dov(client, other_household):
    """A client logged in as the admin of an English-speaking household."""
    build_member(other_household, "dov", role="admin", lead_access="all")
    assert client.login(username="dov", password=PASSWORD)
    return client


@pytest.fixture
def account(other_household) -> CardDavAccount:
    book = "https://dav.levi.example/dov/contacts/"
    return CardDavAccount.objects.create(
        household=other_household,
        url=book,
        username="dov",
        password_encrypted=encrypt_secret(STORED),
        address_book_url=book,
    )


@pytest.fixture
def loopback_allowed(settings):
    """The local test servers listen on loopback, which CardDAV refuses by default."""
    settings.YORIK_CARDDAV_ALLOW_PRIVATE = True


def set_account(household, url: str, monkeypatch) -> None:
    """Run carddav_account, the password on standard input."""
    monkeypatch.setattr("sys.stdin", io.StringIO("secret\n"))
    call_command("carddav_account", household=household.slug, url=url, username="anna")


def change(client, account, **fields):
    data = {"url": account.url, "username": account.username, "password": ""}
    return client.post(
        reverse("admin:contacts_carddavaccount_change", args=[account.pk]),
        {**data, **fields},
    )


# The stored password


def test_a_new_url_needs_the_password_again_and_gets_no_stored_one(
    dov, account, loopback_allowed
):
    with recording_server() as theirs:
        response = change(dov, account, url=theirs.url)

    assert not any("authorization" in headers for headers in theirs.requests)
    assert response.status_code == 200
    assert "Give the password again" in response.content.decode()
    account.refresh_from_db()
    assert account.url == "https://dav.levi.example/dov/contacts/"
    assert account_password(account) == STORED


def test_a_new_user_name_needs_the_password_again(dov, account, loopback_allowed):
    with recording_server() as server:
        CardDavAccount.objects.filter(pk=account.pk).update(url=server.url)
        account.refresh_from_db()

        response = change(dov, account, username="mallory")

    assert not any("authorization" in headers for headers in server.requests)
    assert response.status_code == 200
    assert "Give the password again" in response.content.decode()
    account.refresh_from_db()
    assert account.username == "dov"


# Private and local addresses

REFUSED = (
    "The address book's server is on a private or local network address; "
    "Yorik connects only to public ones."
)


def add(client, url: str) -> str:
    response = client.post(
        reverse("admin:contacts_carddavaccount_add"),
        {"url": url, "username": "dov", "password": "secret"},
    )
    assert response.status_code == 200
    return response.content.decode()


def test_a_local_server_is_refused_in_the_same_words_whatever_its_port(dov):
    with recording_server() as listening:
        pages = [
            add(dov, url)
            for url in (
                closed_port_url(),
                listening.url,
                f"http://localhost:{listening.port}/",
                f"http://[::1]:{listening.port}/",
            )
        ]

    assert listening.requests == []
    for page in pages:
        assert html.escape(REFUSED) in page
        assert "could not be reached" not in page
    assert not CardDavAccount.objects.exists()


def test_the_account_command_refuses_a_local_server(household, monkeypatch):
    with (
        recording_server() as listening,
        pytest.raises(CommandError, match="private or local network address"),
    ):
        set_account(household, listening.url, monkeypatch)

    assert listening.requests == []


def test_a_sync_refuses_an_account_on_a_local_server(account):
    with recording_server() as listening:
        CardDavAccount.objects.filter(pk=account.pk).update(
            address_book_url=listening.url
        )
        account.refresh_from_db()

        report = sync_carddav(account=account)

    assert report.error == REFUSED
    assert listening.requests == []


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",  # noqa: S104 (an address to refuse, not one to bind)
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1%eth0",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "2002:7f00:1::1",
    ],
)
def test_private_local_and_multicast_addresses_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "2a00:1450:4001:82b::200e"])
def test_internet_addresses_are_public(address):
    assert is_public_address(address)


# Deadlines


def test_the_account_check_stops_a_trickling_server_at_the_deadline(
    dov, settings, loopback_allowed
):
    settings.YORIK_CARDDAV_TIMEOUT = 1
    with trickling_server(every=0.3) as slow:
        started = time.monotonic()
        page = add(dov, slow.url)
        seconds = time.monotonic() - started

    assert seconds < 4  # the trickle alone lasts 12 s
    assert "Nothing stored: PROPFIND /: the time allowed (1 s) is up" in page
    assert not CardDavAccount.objects.exists()


def test_each_request_of_a_sync_has_its_own_deadline(
    account, settings, loopback_allowed
):
    settings.YORIK_CARDDAV_TIMEOUT = 1
    with trickling_server(every=0.3) as slow:
        CardDavAccount.objects.filter(pk=account.pk).update(address_book_url=slow.url)
        account.refresh_from_db()
        started = time.monotonic()
        report = sync_carddav(account=account)
        seconds = time.monotonic() - started

    assert seconds < 4  # the trickle alone lasts 12 s
    assert report.error == ("PROPFIND /: the server sent no complete answer within 1 s")


def test_the_admin_sync_stops_at_the_sync_deadline_and_says_so(
    dov, account, settings, loopback_allowed
):
    settings.YORIK_CARDDAV_SYNC_DEADLINE = 1
    with trickling_server(every=0.3) as slow:
        CardDavAccount.objects.filter(pk=account.pk).update(address_book_url=slow.url)
        started = time.monotonic()
        response = dov.post(
            reverse("admin:contacts_carddavaccount_changelist"),
            {"action": "sync_now", "_selected_action": [account.pk]},
            follow=True,
        )
        seconds = time.monotonic() - started

    assert seconds < 4  # the trickle alone lasts 12 s
    text = html.unescape(response.content.decode())
    assert "the sync stopped (PROPFIND /: the time allowed (1 s) is up)" in text
    assert "sync again to resume" in text


# TLS


@pytest.fixture
def certificate(tmp_path, monkeypatch) -> Certificate:
    """A certificate for localhost that requests trusts (REQUESTS_CA_BUNDLE)."""
    found = self_signed_certificate(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(found.cert))
    return found


def test_tls_names_and_verifies_the_host_while_connecting_to_its_address(
    household, certificate, loopback_allowed, monkeypatch
):
    with recording_server(tls=certificate) as server:
        with pytest.raises(CommandError, match="no address book found"):
            set_account(household, server.url, monkeypatch)
        # The certificate names the host, not its address.
        address = ipaddress.ip_address(certificate.address)
        host = f"[{address}]" if address.version == 6 else str(address)
        with pytest.raises(
            CommandError, match=r"could not be reached \(the secure connection failed\)"
        ):
            set_account(household, f"https://{host}:{server.port}/", monkeypatch)

    assert server.requests[0]["host"] == f"localhost:{server.port}"
    assert len(server.requests) == 2  # the URL, then /.well-known/carddav


def test_a_trickle_over_tls_is_stopped_at_the_deadline(
    household, certificate, settings, loopback_allowed, monkeypatch
):
    settings.YORIK_CARDDAV_TIMEOUT = 1
    with trickling_server(every=0.3, tls=certificate) as slow:
        started = time.monotonic()
        with pytest.raises(CommandError, match=r"the time allowed \(1 s\) is up"):
            set_account(household, slow.url, monkeypatch)
        seconds = time.monotonic() - started

    assert seconds < 4  # the trickle alone lasts 12 s
