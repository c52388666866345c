#!/usr/bin/env python3
"""Set up and run Yorik people lookup: `python3 dev.py run` or `python3 dev.py test`.

Needs only Python 3.11+: creates the virtual environment in .venv, installs
the project when pyproject.toml changed, and uses the bundled PostgreSQL
unless DATABASE_URL is set.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".installed"


def ensure_environment() -> None:
    """Create .venv and install the project when pyproject.toml changed."""
    if sys.version_info < (3, 11):
        sys.exit("Yorik needs Python 3.11 or newer.")
    if not PYTHON.exists():
        print("Creating the virtual environment in .venv …", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("Installing dependencies (first run takes a minute) …", flush=True)
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-q", "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(wanted)


def manage(*args: str) -> None:
    subprocess.run([str(PYTHON), str(ROOT / "manage.py"), *args], check=True)


def run(args: list[str]) -> None:
    manage("migrate", "--verbosity", "0")
    address = args[0] if args else "127.0.0.1:8000"
    manage("seed_demo", "--login", "--address", address)
    os.execv(PYTHON, [str(PYTHON), str(ROOT / "manage.py"), "runserver", address])


def test(args: list[str]) -> None:
    if not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()):
        print(
            "Chromium is not installed: browser tests will be skipped "
            "(on Debian: apt-get install chromium).",
            flush=True,
        )
    if not any((ROOT.parent / "shared" / "vendor").glob("citus-*.tar.gz")):
        print(
            "No Citus source in ../shared/vendor/: Citus tests will be skipped.",
            flush=True,
        )
    if args:
        os.execv(PYTHON, [str(PYTHON), "-m", "pytest", *args])
    suite = subprocess.run([str(PYTHON), "-m", "pytest"], check=False)
    # The suite again on a Citus cluster (skipped, with a note, without the
    # Citus source or its build tools).
    on_citus = subprocess.run([str(PYTHON), "-m", "tests.citus.suite"], check=False)
    sys.exit(suite.returncode or on_citus.returncode)


def main() -> None:
    commands = {"run": run, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python3 dev.py {{{'|'.join(commands)}}} [args …]")
    os.chdir(ROOT)
    ensure_environment()
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
