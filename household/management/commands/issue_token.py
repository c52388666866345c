from django.core.management.base import BaseCommand, CommandError, CommandParser

from household.selectors import profile_for_login
from yorik.tokens import issue_token


class Command(BaseCommand):
    help = (
        "Issue an API token for a login; the token is printed once, on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="login name of a household member")
        parser.add_argument("--name", default="", help="what the token is for")

    def handle(self, *args, username: str, name: str, **options) -> None:
        profile = profile_for_login(username)
        if profile is None:
            raise CommandError(f"No household member has the login {username!r}.")
        token, plain = issue_token(profile=profile, name=name)
        self.stderr.write(
            f"Token {token.prefix}… for {profile} ({profile.household.slug}). "
            "It is shown only now:"
        )
        self.stdout.write(plain)
