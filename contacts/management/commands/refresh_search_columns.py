from itertools import groupby
from operator import itemgetter

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from contacts.models import Contact
from contacts.services import refresh_search_columns
from household.models import Household

BATCH = 500


class Command(BaseCommand):
    help = (
        "Derive every contact's search columns again, e.g. the concepts its "
        "relation, aliases, business name and tags name after the vocabulary "
        "changed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--household", help="slug of one household (default: every household)"
        )

    def handle(self, *args, household: str | None, **options) -> None:
        contacts = Contact.objects.order_by("household_id", "pk")
        if household:
            found = Household.objects.filter(slug=household).first()
            if found is None:
                raise CommandError(f"No household {household!r}.")
            contacts = contacts.filter(household=found)
        rows = list(contacts.values_list("household_id", "pk"))
        with tqdm(
            total=len(rows), unit="contact", file=self.stderr, disable=None
        ) as bar:
            for household_id, group in groupby(rows, key=itemgetter(0)):
                ids = [pk for _, pk in group]
                for start in range(0, len(ids), BATCH):
                    batch = ids[start : start + BATCH]
                    # One transaction per batch: its names are embedded as it
                    # commits.
                    with transaction.atomic():
                        refresh_search_columns(
                            household_id=household_id, contact_ids=batch
                        )
                    bar.update(len(batch))
        self.stdout.write(f"Refreshed the search columns of {len(rows)} contacts.")
