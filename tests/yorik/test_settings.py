import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # The run's own DJANGO_ settings, and those it was given for Citus, are
    # the test's to give.
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "YORIK_CITUS", "YORIK_DB_PLAN_CACHE_MODE"))
    }
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


SHOW_KEY = [
    "shell",
    "-c",
    "from django.conf import settings; print(settings.SECRET_KEY)",
]


def test_a_local_run_makes_its_own_secret_key_and_keeps_it(tmp_path):
    first = run_manage(*SHOW_KEY, YORIK_DATA_DIR=str(tmp_path))
    again = run_manage(*SHOW_KEY, YORIK_DATA_DIR=str(tmp_path))
    elsewhere = run_manage(*SHOW_KEY, YORIK_DATA_DIR=str(tmp_path / "other"))

    key = first.stdout.split()[-1]
    assert len(key) >= 50, first.stderr
    assert again.stdout.split()[-1] == key
    assert elsewhere.stdout.split()[-1] != key
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "key",
    [
        "django-insecure-local-development-only",
        "short-but-random-Zq8",
        "a" * 60,
        "django-insecure-" + "k3Jx9QvB2mWp7LzR4tYc8NdF6hGs1AeU5oIiVbXnM0qKwEj",
    ],
)
def test_production_refuses_a_short_or_known_secret_key(key):
    result = run_manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY=key)

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be a random string" in result.stderr


SHOW_PROXY = [
    "shell",
    "-c",
    "from django.conf import settings; "
    "print(getattr(settings, 'SECURE_PROXY_SSL_HEADER', None))",
]
PRODUCTION = {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}


def test_x_forwarded_proto_is_trusted_only_when_a_setting_says_so():
    default = run_manage(*SHOW_PROXY, **PRODUCTION)
    behind_proxy = run_manage(
        *SHOW_PROXY, **PRODUCTION, DJANGO_TRUST_X_FORWARDED_PROTO="1"
    )

    assert default.stdout.split()[-1] == "None"
    assert "HTTP_X_FORWARDED_PROTO" in behind_proxy.stdout


SHOW_LOCKOUT = [
    "shell",
    "-c",
    "from django.conf import settings; print(settings.AXES_LOCKOUT_PARAMETERS)",
]


@pytest.mark.parametrize(
    ("setting", "parameters"),
    [
        ("", "['username', 'ip_address']"),
        ("username+ip_address", "[['username', 'ip_address']]"),
        ("username", "['username']"),
    ],
)
def test_the_login_lockout_counts_what_the_setting_names(setting, parameters):
    env = {"YORIK_LOGIN_LOCKOUT": setting} if setting else {}

    result = run_manage(*SHOW_LOCKOUT, **env)

    assert result.stdout.strip().splitlines()[-1] == parameters, result.stderr


def test_a_work_mem_that_is_no_size_is_refused_at_start():
    result = run_manage("check", YORIK_DB_WORK_MEM="16MB; DROP TABLE x")

    assert result.returncode != 0
    assert "YORIK_DB_WORK_MEM must be a size" in result.stderr


@pytest.mark.django_db
def test_the_app_connects_with_its_work_mem():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW work_mem")
        assert cursor.fetchone() == ("16MB",)


SHOW_CITUS = [
    "shell",
    "-c",
    "from django.conf import settings; "
    "print(settings.YORIK_CITUS, settings.DATABASES['default']['OPTIONS']['options'])",
]


@pytest.mark.parametrize(
    ("env", "citus", "plan_cache_mode", "modify_mode"),
    [
        ({}, "False", "force_generic_plan", None),
        ({"YORIK_CITUS": "1"}, "True", "auto", "sequential"),
        (
            {"YORIK_CITUS": "1", "YORIK_DB_PLAN_CACHE_MODE": "force_custom_plan"},
            "True",
            "force_custom_plan",
            "sequential",
        ),
        # The two Citus settings alone, without YORIK_CITUS.
        (
            {
                "YORIK_DB_PLAN_CACHE_MODE": "force_custom_plan",
                "YORIK_CITUS_MULTI_SHARD_MODIFY_MODE": "sequential",
            },
            "True",
            "force_custom_plan",
            "sequential",
        ),
    ],
)
def test_on_citus_the_database_settings_default_to_what_citus_needs(
    env, citus, plan_cache_mode, modify_mode
):
    result = run_manage(*SHOW_CITUS, **env)

    shown, options = result.stdout.strip().splitlines()[-1].split(" ", 1)
    assert shown == citus, result.stderr
    assert f"-c plan_cache_mode={plan_cache_mode}" in options
    if modify_mode:
        assert f"-c citus.multi_shard_modify_mode={modify_mode}" in options
    else:
        assert "citus." not in options
