from django.core.management.base import BaseCommand, CommandError

from people_search.index.similar import LANE_SETTINGS
from yorik.citus import (
    DISTRIBUTED,
    LOCAL,
    REFERENCE,
    NotCitus,
    create_household_functions,
    distribute,
    set_session_defaults,
)

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
        "and copy the shared tables to every node; give every node's sessions the "
        "settings the search statements need. Run it after migrate and after "
        "adding a node; running it again places only tables it has not placed yet."
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
        for signature in create_household_functions():
            self.stdout.write(f"{signature}: run where its household's shards are")
        set_session_defaults(LANE_SETTINGS)
        for name, value in LANE_SETTINGS.items():
            self.stdout.write(f"every node's sessions: {name} = {value}")
        self.stdout.write(f"{placed} table(s) placed.")
