from django.core.management.base import BaseCommand, CommandError

from yorik.citus import DISTRIBUTED, LOCAL, REFERENCE, NotCitus, distribute

STATES = {
    (DISTRIBUTED, True): "distributed by household",
    (DISTRIBUTED, False): "already distributed",
    (REFERENCE, True): "copied to every node",
    (REFERENCE, False): "already copied to every node",
    (LOCAL, True): "given back to the coordinator alone",
}


class Command(BaseCommand):
    help = (
        "On a Citus coordinator, distribute the household tables by household_id "
        "and copy the shared tables to every node. Run it after migrate; running "
        "it again places only tables it has not placed yet."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--shard-count",
            type=int,
            default=32,
            help="Shards of the distributed tables (Citus's default is 32).",
        )

    def handle(self, *args, shard_count: int, **options) -> None:
        placed = 0
        try:
            for placement, now in distribute(shard_count=shard_count):
                self.stdout.write(f"{placement.table}: {STATES[placement.kind, now]}")
                placed += now
        except NotCitus as error:
            raise CommandError(
                f"{error} Run migrate on a Citus coordinator."
            ) from error
        self.stdout.write(f"{placed} table(s) placed.")
