"""Start Django for a benchmark on its own bundled PostgreSQL, apart from app data."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup() -> None:
    """Configure Django against .yorik-bench (or YORIK_DATA_DIR / DATABASE_URL)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("YORIK_DATA_DIR", str(ROOT / ".yorik-bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yorik.settings")
    os.environ.setdefault("YORIK_LOG_LEVEL", "WARNING")
    import django
    from django.core.management import call_command

    # A benchmark's own work is batch work, as a management command's is: no
    # statement timeout unless one is set. The servers it starts (granian)
    # read the environment afresh and keep the timeout requests get.
    batch = "YORIK_DB_STATEMENT_TIMEOUT" not in os.environ
    if batch:
        os.environ["YORIK_DB_STATEMENT_TIMEOUT"] = "0"
    try:
        django.setup()
    finally:
        if batch:
            del os.environ["YORIK_DB_STATEMENT_TIMEOUT"]
    call_command("migrate", verbosity=0)
