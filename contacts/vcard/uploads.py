"""vCard files kept between an admin's dry run and the click that imports them.

The file stays in the database, not in the page: a file of up to
YORIK_VCARD_MAX_BYTES would not fit a form field. The page carries a signed
token naming the kept file; only the admin who uploaded it, in the household
it was run for, can import it, and only for KEPT_UPLOAD_LIFETIME.
"""

from datetime import datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from contacts.models import VCardUpload
from contacts.vcard.importer import ImportSummary, import_vcards
from household.models import Household

KEPT_UPLOAD_LIFETIME = timedelta(minutes=30)
_SALT = "contacts.vcard.uploads"


def keep_upload(
    *,
    household: Household,
    user: AbstractBaseUser,
    data: bytes,
    summary: ImportSummary,
) -> str:
    """Keep a dry run's file and what it listed; return the token that imports it.

    An admin has one kept file at a time, and expired files go as new ones
    are kept (and daily, `delete_expired_uploads`).
    """
    with transaction.atomic():
        VCardUpload.objects.filter(
            Q(uploaded_by=user) | Q(created_at__lt=_oldest_live())
        ).delete()
        upload = VCardUpload.objects.create(
            household=household, uploaded_by=user, data=data, changes=summary.changes
        )
    return signing.dumps(upload.pk, salt=_SALT)


def kept_upload(
    *, token: str, user: AbstractBaseUser, household: Household | None
) -> VCardUpload | None:
    """Return the live file the token names, if this admin kept it, else None.

    `household` is the admin's own household; None for a superuser, who
    chose the household when uploading.
    """
    try:
        upload_id = signing.loads(
            token, salt=_SALT, max_age=KEPT_UPLOAD_LIFETIME.total_seconds()
        )
    except signing.BadSignature:
        return None
    uploads = VCardUpload.objects.filter(
        pk=upload_id, uploaded_by=user, created_at__gte=_oldest_live()
    )
    if household is not None:
        uploads = uploads.filter(household=household)
    return uploads.prefetch_related("household").first()


@transaction.atomic
def import_kept_upload(
    *, upload: VCardUpload, timeout: float | None
) -> ImportSummary | None:
    """Import a kept file if it changes exactly what its dry run listed.

    The file is used up once imported: a second click, or a second tab,
    finds it gone (None). An import that would change something else writes
    nothing, and its summary lists what it would change now.
    """
    kept = VCardUpload.objects.filter(household_id=upload.household_id, pk=upload.pk)
    if not kept.select_for_update().exists():
        return None
    summary = import_vcards(
        household=upload.household,
        data=bytes(upload.data),
        timeout=timeout,
        expected=upload.changes,
    )
    if summary.written:
        upload.delete()
    return summary


def delete_expired_uploads() -> int:
    """Delete the kept files no token can import any more; return how many."""
    deleted, _ = VCardUpload.objects.filter(created_at__lt=_oldest_live()).delete()
    return deleted


def _oldest_live() -> datetime:
    return timezone.now() - KEPT_UPLOAD_LIFETIME
