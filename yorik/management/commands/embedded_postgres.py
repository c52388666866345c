from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from yorik.database import server_status, stop_server


class Command(BaseCommand):
    help = "Show the status of the bundled PostgreSQL server, or stop it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action: str, **options) -> None:
        if "DATA_DIR" not in settings.DATABASES["default"]:
            raise CommandError("DATABASE_URL is set: the bundled server is not in use.")
        data_dir = settings.YORIK_DATA_DIR
        if action == "stop":
            stopped = stop_server(data_dir)
            self.stdout.write("Stopped." if stopped else "Not running.")
            return
        status = server_status(data_dir)
        if status.running:
            self.stdout.write(
                f"Running (pid {status.pid}), data in {status.pgdata}, "
                f"socket in {status.socket_dir}."
            )
        else:
            self.stdout.write(f"Not running; data in {status.pgdata}.")
