from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from people_search.index.similar import LANE_SETTINGS
from yorik.citus import (
    NotCitus,
    UnexpectedPlacement,
    create_household_functions,
    distribute,
    set_session_defaults,
)


class Command(BaseCommand):
    help = (
        "On a Citus coordinator, distribute the household tables by household_id, "
        "co-located, and keep every other table on the coordinator; give every "
        "node's sessions the settings the app's statements are planned with. "
        "Run it after migrate; running it again distributes only tables it has "
        "not yet."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--shard-count",
            type=int,
            default=32,
            help="Shards of the distributed tables (Citus's default is 32).",
        )

    def handle(self, *args, shard_count: int, **options) -> None:
        try:
            done = distribute(shard_count=shard_count)
        except NotCitus as error:
            raise CommandError(
                f"{error} Run migrate on a Citus coordinator."
            ) from error
        except UnexpectedPlacement as error:
            raise CommandError(str(error)) from error
        for table in done.already:
            self.stdout.write(f"{table}: already distributed")
        dropped: dict[str, list[str]] = {}
        for key in done.keys_dropped:
            dropped.setdefault(key.table, []).append(key.parent)
        for table in done.distributed:
            keys = ", ".join(sorted(set(dropped.get(table, []))))
            self.stdout.write(
                f"{table}: distributed by household"
                + (f"; foreign keys to {keys} dropped" if keys else "")
            )
        if done.keys_dropped:
            self.stdout.write(
                "Citus checks no foreign key from a distributed table to a table "
                "on the coordinator; Django's on_delete still keeps the rows in step."
            )
        for signature in create_household_functions():
            self.stdout.write(f"{signature}: run where its household's shards are")
        session = {**settings.YORIK_PLANNER_SETTINGS, **LANE_SETTINGS}
        set_session_defaults(session)
        for name, value in session.items():
            self.stdout.write(f"every node's sessions: {name} = {value}")
        self.stdout.write(f"{len(done.distributed)} table(s) distributed.")
