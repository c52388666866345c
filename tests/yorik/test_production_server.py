"""The server docs/operations.md names for production serves the app as documented:
granian with `yorik.wsgi:application`, production settings, on this test's
database."""

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from django.db import connection

from tests.builders import build_contact
from yorik.tokens import issue_token

pytestmark = pytest.mark.django_db(transaction=True)

GRANIAN = Path(sys.executable).with_name("granian")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Iterator[str]:
    """Run granian as docs/operations.md's production command does, two workers of two
    threads, against the test database; yield its URL."""
    connection.ensure_connection()
    database = connection.get_connection_params()
    # The bundled server listens on a socket in its data directory.
    host = quote(database.get("host") or "localhost", safe="")
    port = f":{database['port']}" if database.get("port") else ""
    password = (
        f":{quote(database['password'], safe='')}" if database.get("password") else ""
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        listen = probe.getsockname()[1]
    environment = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": f"postgres://{database['user']}{password}@{host}{port}"
        f"/{database['dbname']}",
    }
    process = subprocess.Popen(
        [
            str(GRANIAN),
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(listen),
            "--workers",
            "2",
            "--blocking-threads",
            "2",
            "--respawn-failed-workers",
            "yorik.wsgi:application",
        ],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{listen}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                requests.get(f"{url}/api/skills/", timeout=5)
                break
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.2)
        else:
            process.kill()
            pytest.fail(f"granian did not answer:\n{process.communicate()[0]}")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # A worker busy past the grace time on a loaded machine.
            process.kill()
            process.wait()


def test_granian_serves_skill_calls_with_their_errors(
    server, household, admin_membership
):
    build_contact(household, "Gisela Becker", relation="Oma")
    _, token = issue_token(profile=admin_membership.profile)
    headers = {"Authorization": f"Bearer {token}", "Accept-Language": "de"}

    skills = requests.get(f"{server}/api/skills/", headers=headers, timeout=30)
    found = requests.post(
        f"{server}/api/skills/find_person/call/",
        json={"query": "meine Oma"},
        headers=headers,
        timeout=30,
    )
    refused = requests.post(
        f"{server}/api/skills/find_person/call/",
        json={"query": "Oma", "limit": 0},
        headers=headers,
        timeout=30,
    )
    stranger = requests.get(
        f"{server}/api/skills/", headers={"Authorization": "Bearer nope"}, timeout=30
    )

    assert skills.status_code == 200
    assert "find_person" in {skill["name"] for skill in skills.json()["skills"]}
    assert skills.headers["X-Frame-Options"] == "DENY"
    assert found.status_code == 200
    assert [r["display_name"] for r in found.json()["results"]] == ["Gisela Becker"]
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_input"
    assert refused.headers["Content-Language"] == "de"
    assert stranger.status_code == 401
