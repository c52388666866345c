"""Django database backend: PostgreSQL served by the bundled server, on demand."""

from pathlib import Path

from django.db.backends.postgresql import base

from yorik.database import ensure_server


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        params["host"] = str(ensure_server(Path(self.settings_dict["DATA_DIR"])))
        return params
