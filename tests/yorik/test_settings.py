import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_deploy_check_is_clean_with_production_settings():
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="yorik.example.org",
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = run_manage("check", DJANGO_DEBUG="0")

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr
