"""Keep the name embeddings in step with the names they embed."""

import logging
from collections.abc import Iterable

from django.db import transaction

from contacts.models import Contact
from household.models import Household, Lead, Membership, Role
from people_search.embeddings import EmbeddingError, embedding_provider
from people_search.models import NameEmbedding, Subject
from people_search.names import fold_name

logger = logging.getLogger(__name__)


def index_members(*, household: Household, membership_ids: Iterable[int]) -> None:
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


def index_leads(*, household: Household, lead_ids: Iterable[int]) -> None:
    """Embed the names of these leads."""
    leads = Lead.objects.filter(household=household, pk__in=list(lead_ids))
    _store(
        household=household,
        subject=Subject.LEAD,
        names={lead.pk: lead.full_name for lead in leads},
    )


def index_contacts(*, household: Household, contact_ids: Iterable[int]) -> None:
    """Embed the display names of these contacts."""
    contacts = Contact.objects.filter(household=household, pk__in=list(contact_ids))
    _store(
        household=household,
        subject=Subject.CONTACT,
        names={contact.pk: contact.display_name for contact in contacts},
    )


def index_household(*, household: Household) -> int:
    """Embed every name of the household again; return how many rows were embedded."""
    NameEmbedding.objects.filter(household=household).delete()
    index_members(
        household=household,
        membership_ids=household.memberships.values_list("pk", flat=True),
    )
    index_leads(
        household=household, lead_ids=household.leads.values_list("pk", flat=True)
    )
    index_contacts(
        household=household, contact_ids=household.contacts.values_list("pk", flat=True)
    )
    return NameEmbedding.objects.filter(household=household).count()


@transaction.atomic
def _store(
    *,
    household: Household,
    subject: str,
    names: dict[int, str],
    dropped: Iterable[int] = (),
) -> None:
    """Upsert embeddings whose folded name changed; delete those of dropped rows."""
    NameEmbedding.objects.filter(subject=subject, subject_id__in=list(dropped)).delete()
    folded = {pk: fold_name(name) for pk, name in names.items()}
    NameEmbedding.objects.filter(
        subject=subject, subject_id__in=[pk for pk, name in folded.items() if not name]
    ).delete()
    stored = dict(
        NameEmbedding.objects.filter(
            subject=subject, subject_id__in=list(folded)
        ).values_list("subject_id", "name")
    )
    changed = {
        pk: name for pk, name in folded.items() if name and stored.get(pk) != name
    }
    if not changed:
        return
    try:
        vectors = embedding_provider().embed([names[pk] for pk in changed])
    except EmbeddingError:
        # Similar-name search degrades to text and phone for these rows until
        # the next write or `manage.py reindex_names`.
        logger.warning(
            "Could not embed %d %s names.", len(changed), subject, exc_info=True
        )
        return
    NameEmbedding.objects.bulk_create(
        [
            NameEmbedding(
                household=household,
                subject=subject,
                subject_id=pk,
                name=name,
                embedding=vector,
            )
            for (pk, name), vector in zip(changed.items(), vectors, strict=True)
        ],
        update_conflicts=True,
        unique_fields=["subject", "subject_id"],
        update_fields=["household", "name", "embedding"],
    )
