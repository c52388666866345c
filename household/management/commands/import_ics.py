from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from household.icalendar_import import CalendarFileError, import_ics
from household.models import Household


class Command(BaseCommand):
    help = (
        "Import an iCalendar file's events into a household; recurring events "
        "become their past occurrences. Safe to re-run. Events that cannot be "
        "read are skipped and listed on stderr; the command fails when the "
        "file is no calendar or none of its events could be imported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the .ics file")
        parser.add_argument(
            "--household", required=True, help="slug of the household to fill"
        )

    def handle(self, *args, file: Path, household: str, **options) -> None:
        try:
            target = Household.objects.get(slug=household)
        except Household.DoesNotExist:
            raise CommandError(f"No household {household!r}.") from None
        try:
            data = file.read_bytes()
        except OSError as error:
            raise CommandError(f"{file}: {error.strerror}") from error
        try:
            counts = import_ics(household=target, data=data)
        except CalendarFileError as error:
            raise CommandError(f"{file}: {error}; nothing was imported.") from error
        for line in [*counts.warnings, *counts.problems]:
            self.stderr.write(line)
        if not counts.imported and counts.skipped:
            raise CommandError(
                f"{file}: none of its events could be imported ({counts})."
            )
        style = self.style.WARNING if counts.skipped else self.style.SUCCESS
        self.stdout.write(style(f"Imported {file} into {target.slug!r}: {counts}."))
