from django.core.management.base import BaseCommand

from contacts.vcard.uploads import delete_expired_uploads


class Command(BaseCommand):
    help = (
        "Delete the vCard files kept for an import whose dry run has expired "
        "(run it daily)."
    )

    def handle(self, *args, **options) -> None:
        deleted = delete_expired_uploads()
        self.stdout.write(f"Deleted {deleted} expired vCard upload(s).")
