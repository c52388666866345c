from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from household.models import Household
from people_search.services import household_size, index_household


class Command(BaseCommand):
    help = "Embed every member's, lead's and contact's name again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--household", help="slug of one household (default: every household)"
        )

    def handle(self, *args, household: str | None, **options) -> None:
        households = Household.objects.order_by("slug")
        if household:
            households = households.filter(slug=household)
            if not households.exists():
                raise CommandError(f"No household {household!r}.")
        total = 0
        for each in households:
            with tqdm(
                total=household_size(household=each),
                desc=each.slug,
                unit="row",
                file=self.stderr,
                disable=None,
            ) as bar:
                total += index_household(household=each, on_progress=bar.update)
        self.stdout.write(
            f"Embedded {total} names in {households.count()} household(s)."
        )
