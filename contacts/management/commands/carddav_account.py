import getpass
import os
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contacts.carddav.accounts import (
    account_for,
    check_account,
    store_account,
    vcard_version_for,
)
from contacts.carddav.client import CardDavError
from contacts.models import CardDavAccount
from household.models import Household


class Command(BaseCommand):
    help = (
        "Set a household's CardDAV account: checks the login and finds the "
        "address book before storing it. The password comes from standard input "
        "(or --password-env) and is stored encrypted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--household", required=True, help="household slug")
        parser.add_argument(
            "--url",
            required=True,
            help="the address book's URL, or the server's to find it from",
        )
        parser.add_argument("--username", required=True)
        parser.add_argument(
            "--password-env",
            metavar="VAR",
            help="read the password from this environment variable instead",
        )

    def handle(
        self,
        *args,
        household: str,
        url: str,
        username: str,
        password_env: str | None,
        **options,
    ) -> None:
        try:
            target = Household.objects.get(slug=household)
        except Household.DoesNotExist:
            raise CommandError(f"No household {household!r}.") from None
        try:
            CardDavAccount._meta.get_field("url").run_validators(url)
        except ValidationError as error:
            raise CommandError(f"--url: {' '.join(error.messages)}") from None
        if password_env:
            if password_env not in os.environ:
                raise CommandError(f"The variable {password_env} is not set.")
            password = os.environ[password_env]
        elif sys.stdin.isatty():
            password = getpass.getpass("Password: ")
        else:
            password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise CommandError("No password given; nothing stored.")
        try:
            book = check_account(url=url, username=username, password=password)
        except CardDavError as error:
            raise CommandError(f"Nothing stored: {error}") from error
        store_account(
            account=account_for(target),
            url=url,
            username=username,
            password=password,
            address_book=book,
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored the CardDAV account of {target.slug!r}: address book "
                f"{book.url} (vCard {vcard_version_for(book)}, "
                f"{'sync-collection' if book.supports_sync else 'ETag listing'})."
            )
        )
