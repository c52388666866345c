#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yorik.settings")
    if sys.argv[1:2] != ["runserver"]:
        # Commands do batch work (imports, migrations, reindexing): unless set,
        # they get no statement timeout, which is for answering requests.
        os.environ.setdefault("YORIK_DB_STATEMENT_TIMEOUT", "0")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
