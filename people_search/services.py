"""Keep the name embeddings in step with the names they embed."""

import logging
from collections.abc import Callable, Iterable

from django.db import transaction

from contacts.models import Contact
from household.models import Household, Lead, Membership, Role
from people_search.embeddings import EmbeddingError, embedding_provider, name_words
from people_search.models import NameEmbedding, Subject
from people_search.names import fold_name

logger = logging.getLogger(__name__)

_CHUNK = 500


def index_members(household: Household, membership_ids: Iterable[int]) -> None:
    """Embed the names of these memberships; managed children are never embedded."""
    memberships = Membership.objects.filter(
        household=household, pk__in=list(membership_ids)
    ).select_related("profile")
    _store(
        household=household,
        subject=Subject.MEMBER,
        names={
            m.pk: m.profile.full_name or m.profile.username
            for m in memberships
            if m.role != Role.CHILD
        },
        dropped={m.pk for m in memberships if m.role == Role.CHILD},
    )


def index_profile(*, household: Household, profile_id: int) -> None:
    """Embed the name of a profile's memberships after the profile changed."""
    index_members(
        household=household,
        membership_ids=Membership.objects.filter(profile_id=profile_id).values_list(
            "pk", flat=True
        ),
    )


def index_leads(household: Household, lead_ids: Iterable[int]) -> None:
    """Embed the names of these leads."""
    leads = Lead.objects.filter(household=household, pk__in=list(lead_ids))
    _store(
        household=household,
        subject=Subject.LEAD,
        names={lead.pk: lead.full_name for lead in leads},
    )


def index_contacts(household: Household, contact_ids: Iterable[int]) -> None:
    """Embed the display names of these contacts."""
    contacts = Contact.objects.filter(household=household, pk__in=list(contact_ids))
    _store(
        household=household,
        subject=Subject.CONTACT,
        names={contact.pk: contact.display_name for contact in contacts},
    )


def index_household(
    *, household: Household, on_progress: Callable[[int], object] = lambda rows: None
) -> int:
    """Embed every name of the household again; return how many rows were embedded.

    Rows are embedded in chunks; `on_progress` hears how many each chunk held.
    """
    NameEmbedding.objects.filter(household=household).delete()
    for index, ids in (
        (index_members, household.memberships.values_list("pk", flat=True)),
        (index_leads, household.leads.values_list("pk", flat=True)),
        (index_contacts, household.contacts.values_list("pk", flat=True)),
    ):
        ids = list(ids)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            index(household, chunk)
            on_progress(len(chunk))
    return NameEmbedding.objects.filter(household=household).count()


def household_size(*, household: Household) -> int:
    """Return how many members, leads and contacts a household has."""
    return (
        household.memberships.count()
        + household.leads.count()
        + household.contacts.count()
    )


def embedded_texts(name: str) -> set[str]:
    """Return what is embedded for a name: the whole folded name and each word.

    Word vectors let a single name ("Meier") find "Peter Mayer", whose
    whole-name vector is diluted by the first name.
    """
    folded = fold_name(name)
    if not folded:
        return set()
    words = {word for word in name_words(name) if len(word) > 1}
    return {folded} | (words if len(words) > 1 else set())


@transaction.atomic
def _store(
    *,
    household: Household,
    subject: str,
    names: dict[int, str],
    dropped: Iterable[int] = (),
) -> None:
    """Make the stored embeddings of these rows match their names."""
    wanted = {(pk, text) for pk, name in names.items() for text in embedded_texts(name)}
    rows = NameEmbedding.objects.filter(
        subject=subject, subject_id__in=[*names, *dropped]
    )
    stored = set(rows.values_list("subject_id", "name"))
    stale = stored - wanted
    if stale:
        rows.filter(
            pk__in=[
                pk
                for pk, subject_id, name in rows.values_list("pk", "subject_id", "name")
                if (subject_id, name) in stale
            ]
        ).delete()
    missing = sorted(wanted - stored)
    if not missing:
        return
    texts = sorted({text for _, text in missing})
    try:
        vectors = dict(zip(texts, embedding_provider().embed(texts), strict=True))
    except EmbeddingError:
        # Similar-name search degrades to text and phone for these rows until
        # the next write or `manage.py reindex_names`.
        logger.warning(
            "Could not embed %d %s names.", len(texts), subject, exc_info=True
        )
        return
    NameEmbedding.objects.bulk_create(
        NameEmbedding(
            household=household,
            subject=subject,
            subject_id=pk,
            name=text,
            embedding=vectors[text],
        )
        for pk, text in missing
    )
