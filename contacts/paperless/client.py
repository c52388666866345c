"""Read a Paperless-ngx server's correspondents and documents through its REST API."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests

API_VERSION = 9
PAGE_SIZE = 100


class PaperlessError(Exception):
    """The server could not be read; the message names the URL and the reason."""


@dataclass(frozen=True)
class Correspondent:
    paperless_id: int
    name: str


@dataclass(frozen=True)
class Document:
    paperless_id: int
    title: str
    correspondent_id: int | None
    created: date | None


@dataclass(frozen=True)
class PaperlessClient:
    """Read a Paperless-ngx server through its REST API with an API token."""

    url: str
    token: str
    timeout: float

    def correspondents(self) -> list[Correspondent]:
        """Return every correspondent the token may see."""
        return [
            Correspondent(paperless_id=_id(row), name=_text(row, "name"))
            for row in self._results(
                "/api/correspondents/", {"last_correspondence": "1"}
            )
        ]

    def documents(self) -> list[Document]:
        """Return every document the token may see, without its text."""
        return [
            Document(
                paperless_id=_id(row),
                title=_text(row, "title"),
                correspondent_id=_optional_id(row, "correspondent"),
                created=_date(row.get("created")),
            )
            for row in self._results(
                "/api/documents/", {"fields": "id,title,correspondent,created"}
            )
        ]

    def _results(self, path: str, params: Mapping[str, str]) -> Iterator[Any]:
        """Yield the results of every page, following each page's `next`."""
        url = self.url.rstrip("/") + path
        query = [*params.items(), ("page_size", str(PAGE_SIZE))]
        headers = {
            "Authorization": f"Token {self.token}",
            "Accept": f"application/json; version={API_VERSION}",
        }
        with requests.Session() as session:
            while True:
                page = self._page(session, url, query, headers)
                yield from page["results"]
                if not page.get("next"):
                    return
                # Only the query of `next` is used: behind a proxy its host may
                # be an internal one, and the token must not go anywhere else.
                query = parse_qsl(urlsplit(page["next"]).query)

    def _page(
        self,
        session: requests.Session,
        url: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
    ) -> dict[str, Any]:
        try:
            response = session.get(
                url, params=query, headers=headers, timeout=self.timeout
            )
        except requests.Timeout as error:
            raise PaperlessError(
                f"{url}: no answer within {self.timeout:g} s"
            ) from error
        except requests.RequestException as error:
            raise PaperlessError(f"{url}: {error}") from error
        if not response.ok:
            raise PaperlessError(
                f"{response.url}: HTTP {response.status_code} {response.reason}"
            )
        try:
            page = response.json()
        except ValueError as error:
            raise PaperlessError(f"{response.url}: the answer is not JSON") from error
        if not isinstance(page, dict) or not isinstance(page.get("results"), list):
            raise PaperlessError(f"{response.url}: the answer has no results list")
        return page


def _id(row: Any) -> int:
    value = row.get("id") if isinstance(row, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PaperlessError(f"A result has no integer id: {row!r:.200}")
    return value


def _optional_id(row: dict[str, Any], key: str) -> int | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PaperlessError(f"Result {row['id']}: {key} is not an id: {value!r}")
    return value


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise PaperlessError(f"Result {row['id']}: {key} is not a string")
    return value


def _date(value: Any) -> date | None:
    """Read `created`: a date in API version 9, a timestamp before it."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError as error:
        raise PaperlessError(f"created is not a date: {value!r}") from error
