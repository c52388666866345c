"""A household's CardDAV account: checked on the server, stored, its password read."""

from typing import Any

from django.conf import settings
from django.db import transaction

from contacts.carddav.client import AddressBook, CardDavClient
from contacts.carddav.credentials import decrypt_secret, encrypt_secret
from contacts.models import CardDavAccount
from household.models import Household


def check_account(
    *, url: str, username: str, password: str, session: Any = None
) -> AddressBook:
    """Log in and find the address book; raise CardDavError when that fails.

    All of it must be done within YORIK_CARDDAV_TIMEOUT seconds: it is a few
    small requests, made while a person waits.
    """
    client = client_for(
        url,
        username=username,
        password=password,
        time_limit=settings.YORIK_CARDDAV_TIMEOUT,
        session=session,
    )
    return client.find_address_book()


def client_for(
    url: str, *, username: str, password: str, time_limit: float, session: Any
) -> CardDavClient:
    """Return a client with the configured timeout and address rules."""
    return CardDavClient(
        url,
        username=username,
        password=password,
        timeout=settings.YORIK_CARDDAV_TIMEOUT,
        time_limit=time_limit,
        allow_private=settings.YORIK_CARDDAV_ALLOW_PRIVATE,
        session=session,
    )


@transaction.atomic
def store_account(
    *,
    account: CardDavAccount,
    url: str,
    username: str,
    password: str,
    address_book: AddressBook,
) -> CardDavAccount:
    """Save a household's account (new or changed) as check_account found it.

    Another address book starts the sync afresh: the cards of the old one
    are forgotten (their contacts stay).
    """
    if account.pk is not None and account.address_book_url != address_book.url:
        account.cards.all().delete()
        account.sync_token = ""
        account.last_synced_at = None
    account.url = url
    account.username = username
    account.password_encrypted = encrypt_secret(password)
    account.address_book_url = address_book.url
    account.vcard_version = vcard_version_for(address_book)
    account.full_clean()
    account.save()
    return account


def account_for(household: Household) -> CardDavAccount:
    """Return the household's account, or a new unsaved one."""
    return CardDavAccount.objects.filter(household=household).first() or CardDavAccount(
        household=household
    )


def vcard_version_for(address_book: AddressBook) -> str:
    """vCard 4.0, unless the address book says it takes only 3.0."""
    if not address_book.versions or "4.0" in address_book.versions:
        return "4.0"
    return "3.0"


def account_password(account: CardDavAccount) -> str:
    """Return the stored password; raise UnreadableSecret when it cannot be read."""
    return decrypt_secret(account.password_encrypted)
