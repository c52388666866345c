from django.core.management.base import BaseCommand, CommandError, CommandParser

from household.selectors import profile_for_login
from yorik.tokens import revoke_tokens


class Command(BaseCommand):
    help = "Revoke every API token of a login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args, username: str, **options) -> None:
        profile = profile_for_login(username)
        if profile is None:
            raise CommandError(f"No household member has the login {username!r}.")
        count = revoke_tokens(profile=profile)
        self.stdout.write(f"Revoked {count} token(s) of {username}.")
