from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from contacts.vcard.exporter import export_vcards
from household.models import Household


class Command(BaseCommand):
    help = "Write every contact of a household but spam as vCard 4.0."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--household", required=True, metavar="SLUG", help="household slug"
        )
        parser.add_argument("--out", type=Path, help="file to write instead of stdout")

    def handle(self, *args, household: str, out: Path | None, **options) -> None:
        target = Household.objects.filter(slug=household).first()
        if target is None:
            raise CommandError(f"No household {household!r}.")
        text = export_vcards(household=target)
        if out is None:
            self.stdout.write(text, ending="")
        else:
            out.write_text(text, encoding="utf-8", newline="")
            self.stderr.write(f"Wrote {out}.")
