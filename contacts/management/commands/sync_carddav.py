from django.core.management.base import BaseCommand, CommandError, CommandParser

from contacts.carddav.sync import sync_carddav
from contacts.models import CardDavAccount
from household.models import Household


class Command(BaseCommand):
    help = (
        "Sync a household's contacts with its CardDAV address book, both ways. "
        "Safe to re-run; after a fault the next run resumes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--household", required=True, help="household slug")

    def handle(self, *args, household: str, **options) -> None:
        found = Household.objects.filter(slug=household).first()
        account = (
            CardDavAccount.objects.filter(household=found)
            .prefetch_related("household")
            .first()
            if found is not None
            else None
        )
        if account is None:
            raise CommandError(
                f"Household {household!r} has no CardDAV account; set one with "
                "carddav_account."
            )
        report = sync_carddav(account=account, show_progress=True)
        for conflict in report.conflicts:
            self.stdout.write(f"conflict, the server's value kept: {conflict}")
        for problem in report.skipped:
            self.stdout.write(f"skipped {problem}")
        summary = (
            f"{report} ({report.requests} requests, "
            f"{report.cards_downloaded} cards downloaded)"
        )
        if report.error:
            raise CommandError(
                f"CardDAV sync of {household!r} stopped: {report.error}. So far: "
                f"{summary}. Cards not done are unchanged; run again to resume."
            )
        self.stdout.write(
            self.style.SUCCESS(f"CardDAV sync of {household!r}: {summary}")
        )
