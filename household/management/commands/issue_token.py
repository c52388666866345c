from django.core.management.base import BaseCommand, CommandError, CommandParser

from household.selectors import acting_membership, profile_for_login
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
        if acting_membership(profile.pk) is None:
            self.stderr.write(
                f"{username!r} is no active member: the token is refused until "
                "the membership is active."
            )
        self.stderr.write(
            f"Token {token.prefix}… for {profile} ({profile.household.slug}). "
            "It is shown only now:"
        )
        self.stdout.write(plain)
