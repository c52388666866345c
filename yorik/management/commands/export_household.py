import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from household.models import Household
from yorik.bundles import export_household


class Command(BaseCommand):
    help = "Write one household as a JSON bundle to standard output or a file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--out", type=Path, help="file to write instead of stdout")

    def handle(self, *args, slug: str, out: Path | None, **options) -> None:
        household = Household.objects.filter(slug=slug).first()
        if household is None:
            raise CommandError(f"No household {slug!r}.")
        text = json.dumps(
            export_household(household=household), ensure_ascii=False, indent=2
        )
        if out is None:
            self.stdout.write(text)
        else:
            out.write_text(text + "\n", encoding="utf-8")
            self.stderr.write(f"Wrote {out}.")
