from django.core.management.base import BaseCommand

from yorik.cards import delete_expired_cards


class Command(BaseCommand):
    help = "Delete the cards whose signed links have expired (run it daily)."

    def handle(self, *args, **options) -> None:
        deleted = delete_expired_cards()
        self.stdout.write(f"Deleted {deleted} expired card(s).")
