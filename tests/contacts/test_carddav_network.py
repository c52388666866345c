"""Where CardDAV requests may go, what they carry, and how long they may take."""

import pytest
from django.urls import reverse

from contacts.carddav_sync import account_password
from contacts.credentials import encrypt_secret
from contacts.models import CardDavAccount
from tests.builders import PASSWORD, build_member
from tests.contacts.http_servers import recording_server

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
