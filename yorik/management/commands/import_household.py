from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from yorik.bundles import BundleError, import_household, read_bundle


class Command(BaseCommand):
    help = "Import one household from a JSON bundle, all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="bundle file (yorik.household/1)")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace the household if its slug exists",
        )

    def handle(self, *args, file: Path, replace: bool, **options) -> None:
        try:
            household = import_household(bundle=read_bundle(file), replace=replace)
        except BundleError as error:
            for problem in error.problems:
                self.stderr.write(problem)
            raise CommandError(
                f"{file}: {len(error.problems)} problem(s); nothing was imported."
            ) from error
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported household {household.slug!r}: "
                f"{household.profiles.count()} people, "
                f"{household.contacts.count()} contacts, "
                f"{household.leads.count()} leads, "
                f"{household.calendar_events.count()} calendar events."
            )
        )
