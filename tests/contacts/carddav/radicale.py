"""A real Radicale 3 CardDAV server for the sync tests, on a loopback port.

Each server has its own storage folder and an htpasswd file of plain
passwords; `owner_only` rights let each user reach only their own address
books (Radicale denies everything by default since 3.5). Tests act as the
phone with plain requests against it.
"""

import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import requests

USERS = [f"user{n}" for n in range(1, 41)]


def password_of(user: str) -> str:
    return f"pw-{user}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Radicale:
    folder: Path
    port: int = 0
    process: subprocess.Popen | None = None
    free_users: list[str] = field(default_factory=lambda: list(USERS))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> "Radicale":
        self.folder.mkdir(parents=True, exist_ok=True)
        users = self.folder / "users"
        users.write_text("".join(f"{u}:{password_of(u)}\n" for u in USERS))
        self.port = self.port or _free_port()
        config = self.folder / "config"
        config.write_text(
            f"[server]\nhosts = 127.0.0.1:{self.port}\n"
            f"[auth]\ntype = htpasswd\nhtpasswd_filename = {users}\n"
            "htpasswd_encryption = plain\ndelay = 0\n"
            "[rights]\ntype = owner_only\n"
            f"[storage]\nfilesystem_folder = {self.folder / 'collections'}\n"
            "[web]\ntype = none\n"
            "[logging]\nlevel = warning\n"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "radicale", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("Radicale did not start") from None
                time.sleep(0.05)
        raise RuntimeError("Radicale did not answer within 20 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def new_user(self) -> "Phone":
        """Return a user of their own with an empty address book."""
        user = self.free_users.pop(0)
        phone = Phone(self, user)
        phone.make_address_book()
        return phone


class Phone:
    """One user's address book, written the way a phone would write it."""

    def __init__(self, server: Radicale, user: str) -> None:
        self.server = server
        self.user = user
        self.password = password_of(user)
        self.book = f"{server.url}{user}/contacts/"
        self.session = requests.Session()
        self.session.auth = (user, self.password)

    def make_address_book(self) -> None:
        body = (
            '<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop>'
            "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>"
            "<d:displayname>Contacts</d:displayname></d:prop></d:set></d:mkcol>"
        )
        # Radicale makes the principal collection on the user's first request.
        self.session.request("PROPFIND", f"{self.server.url}{self.user}/", timeout=10)
        answer = self.session.request("MKCOL", self.book, data=body, timeout=10)
        assert answer.status_code == 201, answer.text

    def put(self, name: str, card: str, *, etag: str | None = None) -> str:
        headers = {"Content-Type": "text/vcard; charset=utf-8"}
        if etag:
            headers["If-Match"] = etag
        answer = self.session.put(
            f"{self.book}{name}", data=card.encode(), headers=headers, timeout=10
        )
        assert answer.status_code in (201, 204), answer.text
        return answer.headers["ETag"]

    def fill(self, cards: list[str]) -> None:
        """Replace the whole address book by the cards, named after their UIDs.

        One PUT of the collection, as Radicale allows: much faster than one
        PUT per card.
        """
        answer = self.session.put(
            self.book,
            data="".join(cards).encode(),
            headers={"Content-Type": "text/vcard; charset=utf-8"},
            timeout=120,
        )
        assert answer.status_code in (201, 204), answer.text

    def get(self, name: str) -> str:
        answer = self.session.get(f"{self.book}{name}", timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.text

    def delete(self, name: str) -> None:
        answer = self.session.delete(f"{self.book}{name}", timeout=10)
        assert answer.status_code in (200, 204), answer.text

    def names(self) -> list[str]:
        """Return the file names of the cards in the address book."""
        answer = self.session.request(
            "PROPFIND", self.book, headers={"Depth": "1"}, timeout=10
        )
        assert answer.status_code == 207, answer.text
        text = answer.text
        prefix = f"/{self.user}/contacts/"
        names = []
        for part in text.split("<href>")[1:]:
            href = part.split("</href>")[0]
            if href.startswith(prefix) and href != prefix:
                names.append(href.removeprefix(prefix))
        return sorted(names)


def vcard(name: str, *lines: str, uid: str | None = None, version: str = "3.0") -> str:
    """Return a card as a phone writes it, its N made from the name."""
    given, _, family = name.partition(" ")
    body = [
        "BEGIN:VCARD",
        f"VERSION:{version}",
        f"UID:{uid or uuid.uuid4()}",
        f"FN:{name}",
        f"N:{family};{given};;;",
        *lines,
        "END:VCARD",
    ]
    return "\r\n".join(body) + "\r\n"
