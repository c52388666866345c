"""The household's mirror of Paperless-ngx: a REST client and the sync that fills it.

The sync reads every page of correspondents and documents first and writes
only then, in one transaction, so a server error or a timeout leaves the
mirror as it was. Rows are matched by their Paperless id; unchanged rows are
not written, so a re-run is cheap, and rows gone from the server are deleted.
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from django.db import transaction

from contacts.models import PaperlessCorrespondent, PaperlessDocument
from household.models import Household
from people_search.engine.text import fold_name

API_VERSION = 9
PAGE_SIZE = 100
# bulk_update sets each column by a CASE over its batch's rows, which the
# database evaluates per row: one batch of every changed row is quadratic.
UPDATE_BATCH = 500


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


@dataclass(frozen=True)
class SyncCounts:
    created: int
    updated: int
    unchanged: int
    deleted: int

    def __str__(self) -> str:
        return (
            f"{self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged, {self.deleted} deleted"
        )


@dataclass(frozen=True)
class SyncReport:
    correspondents: SyncCounts
    documents: SyncCounts


def sync_paperless(*, household: Household, client: PaperlessClient) -> SyncReport:
    """Make the household's mirror equal what the server holds now.

    Raise PaperlessError, having written nothing, when the server fails.
    """
    correspondents = client.correspondents()
    documents = client.documents()
    return write_paperless_mirror(
        household=household, correspondents=correspondents, documents=documents
    )


@transaction.atomic
def write_paperless_mirror(
    *,
    household: Household,
    correspondents: list[Correspondent],
    documents: list[Document],
) -> SyncReport:
    """Make the household's mirror hold exactly these correspondents and documents.

    Rows are matched by Paperless id and keep their names and titles folded
    for find_known_provider; a document's correspondent_id is a Paperless id.
    """
    name_length = PaperlessCorrespondent._meta.get_field("name").max_length
    title_length = PaperlessDocument._meta.get_field("title").max_length
    # Keyed by Paperless id: a row that moved between pages arrives only once.
    correspondent_counts, gone_correspondents = _upsert(
        PaperlessCorrespondent,
        household,
        {
            c.paperless_id: {
                "name": c.name[:name_length],
                "folded_name": fold_name(c.name[:name_length]),
            }
            for c in correspondents
        },
    )
    local_ids = dict(
        PaperlessCorrespondent.objects.filter(
            household=household,
            paperless_id__in=[c.paperless_id for c in correspondents],
        ).values_list("paperless_id", "pk")
    )
    document_counts, gone_documents = _upsert(
        PaperlessDocument,
        household,
        {
            d.paperless_id: {
                "title": d.title[:title_length],
                "folded_title": fold_name(d.title[:title_length]),
                # A document may name a correspondent the token cannot see.
                "correspondent_id": local_ids.get(d.correspondent_id),
                "created": d.created,
            }
            for d in documents
        },
    )
    # Deleted last, so a document whose correspondent went counts as updated.
    for model, gone in (
        (PaperlessDocument, gone_documents),
        (PaperlessCorrespondent, gone_correspondents),
    ):
        if gone:
            model.objects.filter(household=household, paperless_id__in=gone).delete()
    return SyncReport(correspondents=correspondent_counts, documents=document_counts)


def _upsert(
    model: type[PaperlessCorrespondent] | type[PaperlessDocument],
    household: Household,
    rows: dict[int, dict[str, Any]],
) -> tuple[SyncCounts, set[int]]:
    """Create and update the household's rows by Paperless id, skipping equal ones.

    Return the counts and the ids stored but no longer on the server.
    """
    stored = {
        row.paperless_id: row
        for row in model.objects.select_for_update().filter(household=household)
    }
    new, changed = [], []
    for paperless_id, values in rows.items():
        row = stored.get(paperless_id)
        if row is None:
            new.append(model(household=household, paperless_id=paperless_id, **values))
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            changed.append(row)
    model.objects.bulk_create(new)
    if changed:
        model.objects.bulk_update(
            changed, list(rows[changed[0].paperless_id]), batch_size=UPDATE_BATCH
        )
    gone = set(stored) - set(rows)
    return (
        SyncCounts(
            created=len(new),
            updated=len(changed),
            unchanged=len(stored) - len(gone) - len(changed),
            deleted=len(gone),
        ),
        gone,
    )
