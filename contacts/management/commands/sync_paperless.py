from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contacts.paperless.client import PaperlessClient, PaperlessError
from contacts.paperless.sync import sync_paperless
from household.models import Household


class Command(BaseCommand):
    help = (
        "Mirror a Paperless-ngx server's correspondents and documents into one "
        "household. Safe to re-run; a failed run changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--household", required=True, help="slug of the household to fill"
        )
        parser.add_argument("--url", help="server URL (default: PAPERLESS_URL)")
        parser.add_argument("--token", help="API token (default: PAPERLESS_TOKEN)")

    def handle(
        self,
        *args,
        household: str,
        url: str | None,
        token: str | None,
        **options,
    ) -> None:
        url = url or settings.PAPERLESS_URL
        token = token or settings.PAPERLESS_TOKEN
        if not url or not token:
            raise CommandError(
                "Give the server with --url and --token, or set PAPERLESS_URL and "
                "PAPERLESS_TOKEN."
            )
        try:
            target = Household.objects.get(slug=household)
        except Household.DoesNotExist:
            raise CommandError(f"No household {household!r}.") from None
        client = PaperlessClient(
            url=url, token=token, timeout=settings.PAPERLESS_TIMEOUT
        )
        try:
            report = sync_paperless(household=target, client=client)
        except PaperlessError as error:
            raise CommandError(
                f"Paperless sync failed, the mirror is unchanged: {error}"
            ) from error
        self.stdout.write(
            self.style.SUCCESS(
                f"Synced Paperless-ngx into {target.slug!r}: "
                f"correspondents {report.correspondents}; "
                f"documents {report.documents}."
            )
        )
