"""Fill the household's mirror of Paperless-ngx from what its server holds.

The sync reads every page of correspondents and documents first and writes
only then, in one transaction, so a server error or a timeout leaves the
mirror as it was. Rows are matched by their Paperless id; unchanged rows are
not written, so a re-run is cheap, and rows gone from the server are deleted.
"""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from contacts.models import PaperlessCorrespondent, PaperlessDocument
from contacts.paperless.client import Correspondent, Document, PaperlessClient
from household.models import Household
from people_search.engine.text import fold_name
from yorik.statistics import analyze_after_commit

# bulk_update sets each column by a CASE over its batch's rows, which the
# database evaluates per row: one batch of every changed row is quadratic.
UPDATE_BATCH = 500


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
    analyze_after_commit(
        [PaperlessCorrespondent, PaperlessDocument], household_id=household.pk
    )
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
