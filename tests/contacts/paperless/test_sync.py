"""sync_paperless against a fake Paperless-ngx server started by the test."""

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import PaperlessCorrespondent, PaperlessDocument
from contacts.paperless.client import Correspondent
from contacts.paperless.sync import write_paperless_mirror
from contacts.providers.categories import get_category
from contacts.providers.search import find_known_providers

TOKEN = "paperless-test-token"


@dataclass
class FakePaperless:
    """What the fake server holds, how it misbehaves, and what it was asked."""

    correspondents: list[dict[str, Any]] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 2
    fail_path: str | None = None
    slow_path: str | None = None
    delay: float = 0.0
    requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = field(
        default_factory=list
    )
    url: str = ""


class Handler(BaseHTTPRequestHandler):
    fake: FakePaperless

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.fake.requests.append((parts.path, query, dict(self.headers)))
        if self.headers.get("Authorization") != f"Token {TOKEN}":
            return self.answer(401, {"detail": "Invalid token."})
        if self.headers.get("Accept") != "application/json; version=9":
            return self.answer(406, {"detail": "Unsupported API version."})
        page = int(query.get("page", ["1"])[0])
        if self.fake.slow_path == parts.path and page > 1:
            time.sleep(self.fake.delay)
        if self.fake.fail_path == parts.path and page > 1:
            return self.answer(500, {"detail": "Internal Server Error"})
        rows = {
            "/api/correspondents/": self.fake.correspondents,
            "/api/documents/": self.fake.documents,
        }.get(parts.path)
        if rows is None:
            return self.answer(404, {"detail": "Not found."})
        # Like Paperless-ngx, the server caps the page size the client asks for.
        size = min(int(query.get("page_size", ["25"])[0]), self.fake.page_size)
        start = (page - 1) * size
        following = {**query, "page": [str(page + 1)]}
        next_url = None
        if start + size < len(rows):
            next_url = f"{self.fake.url}{parts.path}?" + "&".join(
                f"{key}={value[0]}" for key, value in following.items()
            )
        return self.answer(
            200,
            {
                "count": len(rows),
                "next": next_url,
                "previous": None,
                "all": [row["id"] for row in rows],
                "results": rows[start : start + size],
            },
        )

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def paperless() -> Iterator[FakePaperless]:
    fake = FakePaperless(
        correspondents=[
            {"id": 2, "name": "Zahnarztpraxis Dr. Schmidt", "document_count": 3},
            {"id": 4, "name": "Autohaus Krüger GmbH", "document_count": 1},
            {"id": 9, "name": "Friseursalon Haarmonie", "document_count": 1},
        ],
        documents=[
            {
                "id": 101,
                "title": "Rechnung Prophylaxe",
                "correspondent": 2,
                "created": "2024-07-14",
            },
            {
                "id": 102,
                "title": "Rechnung Kontrolle und Zahnreinigung",
                "correspondent": 2,
                "created": "2025-01-25",
            },
            {
                "id": 105,
                "title": "Rechnung Prophylaxe",
                "correspondent": 2,
                "created": "2025-11-03",
            },
            {
                "id": 120,
                "title": "Rechnung Inspektion VW Touran",
                "correspondent": 4,
                "created": "2024-04-08",
            },
            {
                "id": 170,
                "title": "Rechnung Strähnen und Schnitt",
                "correspondent": 9,
                # Before API version 9, created was a timestamp.
                "created": "2025-11-20T00:00:00+01:00",
            },
            {"id": 400, "title": "Scan 2024-03-02", "correspondent": None},
        ],
    )
    handler = type("FakeHandler", (Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()


def sync(fake: FakePaperless, token: str = TOKEN) -> str:
    out = StringIO()
    call_command(
        "sync_paperless",
        "--household",
        "becker",
        "--url",
        fake.url + "/",
        "--token",
        token,
        stdout=out,
    )
    return out.getvalue()


def mirror(household) -> dict[str, Any]:
    return {
        "correspondents": sorted(
            PaperlessCorrespondent.objects.filter(household=household).values_list(
                "paperless_id", "name"
            )
        ),
        "documents": sorted(
            PaperlessDocument.objects.filter(household=household).values_list(
                "paperless_id", "title", "correspondent__paperless_id", "created"
            )
        ),
    }


@pytest.mark.django_db
def test_sync_reads_every_page_with_the_token(household, paperless):
    output = sync(paperless)

    state = mirror(household)
    assert [name for _, name in state["correspondents"]] == [
        "Zahnarztpraxis Dr. Schmidt",
        "Autohaus Krüger GmbH",
        "Friseursalon Haarmonie",
    ]
    assert [(d[0], d[2], str(d[3])) for d in state["documents"]] == [
        (101, 2, "2024-07-14"),
        (102, 2, "2025-01-25"),
        (105, 2, "2025-11-03"),
        (120, 4, "2024-04-08"),
        (170, 9, "2025-11-20"),
        (400, None, "None"),
    ]
    assert "correspondents 3 created" in output
    assert "documents 6 created" in output
    pages = [
        (path, query.get("page", ["1"])[0]) for path, query, _ in paperless.requests
    ]
    assert pages == [
        ("/api/correspondents/", "1"),
        ("/api/correspondents/", "2"),
        ("/api/documents/", "1"),
        ("/api/documents/", "2"),
        ("/api/documents/", "3"),
    ]
    _, first_query, headers = paperless.requests[0]
    assert first_query["last_correspondence"] == ["1"]
    assert headers["Authorization"] == f"Token {TOKEN}"
    assert headers["Accept"] == "application/json; version=9"
    assert paperless.requests[2][1]["fields"] == ["id,title,correspondent,created"]


@pytest.mark.django_db
def test_a_second_sync_writes_only_what_changed(household, paperless):
    sync(paperless)
    paperless.correspondents[2]["name"] = "Friseur Haarmonie"
    paperless.documents[1]["title"] = "Rechnung Kontrolle"
    paperless.documents.pop(0)
    paperless.documents.append(
        {
            "id": 106,
            "title": "Rechnung Prophylaxe",
            "correspondent": 2,
            "created": "2026-01-20",
        }
    )

    output = sync(paperless)

    assert "correspondents 0 created, 1 updated, 2 unchanged, 0 deleted" in output
    assert "documents 1 created, 1 updated, 4 unchanged, 1 deleted" in output
    state = mirror(household)
    assert dict(state["correspondents"])[9] == "Friseur Haarmonie"
    assert [d[0] for d in state["documents"]] == [102, 105, 106, 120, 170, 400]


@pytest.mark.django_db
def test_a_correspondent_gone_from_the_server_is_deleted(household, paperless):
    sync(paperless)
    paperless.correspondents.pop(1)
    paperless.documents[3]["correspondent"] = None

    output = sync(paperless)

    assert "correspondents 0 created, 0 updated, 2 unchanged, 1 deleted" in output
    assert "documents 0 created, 1 updated, 5 unchanged, 0 deleted" in output
    assert 4 not in dict(mirror(household)["correspondents"])


@pytest.mark.django_db
def test_a_server_error_leaves_the_mirror_unchanged(household, paperless):
    sync(paperless)
    before = mirror(household)
    paperless.correspondents[0]["name"] = "Renamed"
    paperless.fail_path = "/api/documents/"

    with pytest.raises(CommandError) as failure:
        sync(paperless)

    assert "mirror is unchanged" in str(failure.value)
    assert "/api/documents/?" in str(failure.value)
    assert "HTTP 500" in str(failure.value)
    assert mirror(household) == before


@pytest.mark.django_db
def test_a_timeout_leaves_the_mirror_unchanged(household, paperless, settings):
    settings.PAPERLESS_TIMEOUT = 0.2
    paperless.slow_path = "/api/documents/"
    paperless.delay = 0.6

    with pytest.raises(CommandError, match=r"no answer within 0\.2 s"):
        sync(paperless)

    assert mirror(household) == {"correspondents": [], "documents": []}


@pytest.mark.django_db
def test_a_wrong_token_is_reported(household, paperless):
    with pytest.raises(CommandError, match="HTTP 401"):
        sync(paperless, token="wrong")


@pytest.mark.django_db
def test_the_mirror_belongs_to_one_household(household, other_household, paperless):
    write_paperless_mirror(
        household=other_household,
        correspondents=[Correspondent(2, "Levi Dental")],
        documents=[],
    )

    sync(paperless)

    assert mirror(other_household) == {
        "correspondents": [(2, "Levi Dental")],
        "documents": [],
    }
    assert len(mirror(household)["correspondents"]) == 3


@pytest.mark.django_db
def test_settings_provide_the_server(household, paperless, settings):
    settings.PAPERLESS_URL = paperless.url
    settings.PAPERLESS_TOKEN = TOKEN

    call_command("sync_paperless", "--household", "becker", stdout=StringIO())

    assert len(mirror(household)["documents"]) == 6


@pytest.mark.django_db
def test_the_command_needs_a_server_and_a_household(household, settings):
    settings.PAPERLESS_URL = ""
    settings.PAPERLESS_TOKEN = ""

    with pytest.raises(CommandError, match="PAPERLESS_URL"):
        call_command("sync_paperless", "--household", "becker")
    with pytest.raises(CommandError, match="No household 'nobody'"):
        call_command(
            "sync_paperless",
            "--household",
            "nobody",
            "--url",
            "http://127.0.0.1:9",
            "--token",
            TOKEN,
        )


def folded_mirror(household) -> dict[str, Any]:
    return {
        "correspondents": dict(
            PaperlessCorrespondent.objects.filter(household=household).values_list(
                "name", "folded_name"
            )
        ),
        "documents": dict(
            PaperlessDocument.objects.filter(household=household).values_list(
                "paperless_id", "folded_title"
            )
        ),
    }


@pytest.mark.django_db
def test_sync_keeps_names_and_titles_folded(household, paperless):
    sync(paperless)
    paperless.correspondents[1]["name"] = "AUTOHAUS KRÜGER"
    paperless.documents[4]["title"] = "Rechnung Strähnen"

    output = sync(paperless)

    assert "correspondents 0 created, 1 updated, 2 unchanged" in output
    assert "documents 0 created, 1 updated, 5 unchanged" in output
    state = folded_mirror(household)
    assert state["correspondents"] == {
        "Zahnarztpraxis Dr. Schmidt": "zahnarztpraxis dr. schmidt",
        "AUTOHAUS KRÜGER": "autohaus kruger",
        "Friseursalon Haarmonie": "friseursalon haarmonie",
    }
    assert state["documents"][102] == "rechnung kontrolle und zahnreinigung"
    assert state["documents"][170] == "rechnung strahnen"


@pytest.mark.django_db
def test_a_synced_document_title_reveals_its_correspondent(household, paperless):
    """A correspondent named for no category is found by one document's title."""
    paperless.correspondents.append({"id": 30, "name": "Praxis Öz"})
    paperless.documents.append(
        {
            "id": 300,
            "title": "ZAHNÄRZTIN Dr. Öz",
            "correspondent": 30,
            "created": "2026-02-11",
        }
    )
    sync(paperless)

    with CaptureQueriesContext(connection) as queries:
        found = find_known_providers(
            household=household, category=get_category("dentist")
        )

    assert [c.as_output() for c in found.candidates if c.name == "Praxis Öz"] == [
        {
            "source": "paperless",
            "name": "Praxis Öz",
            "last_seen": "2026-02-11",
            "evidence": "1 document: 'ZAHNÄRZTIN Dr. Öz' on 2026-02-11",
        }
    ]
    assert folded_mirror(household)["documents"][300] == "zahnarztin dr. oz"
    # The stems meet the stored folds; nothing is folded while the question waits.
    sql = " ".join(query["sql"] for query in queries.captured_queries)
    assert "d.folded_title LIKE ANY('{%zahnarzt%," in sql
    assert "unaccent" not in sql
    assert "regexp_replace" not in sql
