import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from contacts.vcard.importer import VCardTooLarge, check_vcard_size, import_vcards
from household.models import Household


class Command(BaseCommand):
    help = (
        "Import a vCard file (2.1, 3.0 or 4.0) into a household's address book; "
        "cards seen before update their contacts instead of duplicating them. "
        "Values that cannot be used and skipped cards are listed on stderr; a "
        "file without any card exits with an error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="vCard file (.vcf)")
        parser.add_argument(
            "--household", required=True, metavar="SLUG", help="household slug"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what the import would do and write nothing",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            metavar="SECONDS",
            help="stop and import nothing when the import takes longer "
            "(default: no limit)",
        )

    def handle(
        self,
        *args,
        file: Path,
        household: str,
        dry_run: bool,
        timeout: float | None,
        **options,
    ) -> None:
        target = Household.objects.filter(slug=household).first()
        if target is None:
            raise CommandError(f"No household {household!r}.")
        try:
            check_vcard_size(file.stat().st_size)
            data = file.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from error
        except VCardTooLarge as error:
            raise CommandError(f"{file}: {error}") from error
        summary = import_vcards(
            household=target,
            data=data,
            dry_run=dry_run,
            show_progress=sys.stderr.isatty(),
            timeout=timeout,
        )
        if summary.file_problem:
            raise CommandError(f"{file}: {summary.file_problem} Nothing was imported.")
        for line in [*summary.warnings, *summary.problems]:
            self.stderr.write(line)
        prefix = "Dry run, nothing written: " if dry_run else ""
        style = self.style.WARNING if summary.skipped else self.style.SUCCESS
        self.stdout.write(style(f"{prefix}{summary}"))
