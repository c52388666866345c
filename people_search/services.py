"""Keep the embedded words of names in step with the names."""

import logging
from collections.abc import Callable, Iterable

from django.db import transaction

from contacts.models import Contact
from household.models import Household, Lead, Membership, Role
from people_search.embeddings import EmbeddingError, embedding_provider, name_words
from people_search.models import NameWord, NameWordUse, Subject

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
    """Embed every name of the household again; return how many words were embedded.

    Rows are indexed in chunks; `on_progress` hears how many each chunk held.
    """
    NameWord.objects.filter(household=household).delete()
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
    return NameWord.objects.filter(household=household).count()


def household_size(*, household: Household) -> int:
    """Return how many members, leads and contacts a household has."""
    return (
        household.memberships.count()
        + household.leads.count()
        + household.contacts.count()
    )


def embedded_words(name: str) -> set[str]:
    """Return the words of a name that are embedded: folded, two letters or more."""
    return {word for word in name_words(name) if len(word) > 1}


@transaction.atomic
def _store(
    *,
    household: Household,
    subject: str,
    names: dict[int, str],
    dropped: Iterable[int] = (),
) -> None:
    """Make the words recorded for these rows match their names.

    A word is embedded once per household, the first time a name uses it.
    """
    wanted = {(pk, word) for pk, name in names.items() for word in embedded_words(name)}
    uses = NameWordUse.objects.filter(
        subject=subject, subject_id__in=[*names, *dropped]
    ).select_related("word")
    stored = {(use.subject_id, use.word.word): use.pk for use in uses}
    stale = [pk for key, pk in stored.items() if key not in wanted]
    if stale:
        NameWordUse.objects.filter(pk__in=stale).delete()
    missing = sorted(wanted - set(stored))
    if not missing:
        return
    words = _word_ids(household, {word for _, word in missing})
    NameWordUse.objects.bulk_create(
        NameWordUse(
            household=household, subject=subject, subject_id=pk, word_id=words[word]
        )
        for pk, word in missing
        if word in words
    )


def _word_ids(household: Household, words: set[str]) -> dict[str, int]:
    """Return the ids of these words, embedding the ones the household lacks.

    Words that cannot be embedded now are left out: similar-name search
    degrades to text and phone for them until the next write or
    `manage.py reindex_names`.
    """
    known = dict(
        NameWord.objects.filter(household=household, word__in=words).values_list(
            "word", "pk"
        )
    )
    new = sorted(words - set(known))
    if new:
        try:
            vectors = embedding_provider().embed(new)
        except EmbeddingError:
            logger.warning("Could not embed %d name words.", len(new), exc_info=True)
            return known
        NameWord.objects.bulk_create(
            [
                NameWord(household=household, word=word, embedding=vector)
                for word, vector in zip(new, vectors, strict=True)
            ],
            ignore_conflicts=True,
        )
        known.update(
            NameWord.objects.filter(household=household, word__in=new).values_list(
                "word", "pk"
            )
        )
    return known
