import secrets
from pathlib import Path

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from household.models import Household, Membership, Role
from people_search.index.models import NameWord
from people_search.services import index_household
from yorik.bundles import BundleError, import_household, read_bundle
from yorik.tokens import issue_token

DEMO_DIR = Path(apps.get_app_config("household").path) / "demo"


class Command(BaseCommand):
    help = "Load the demo households; households that exist are left as they are."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset", action="store_true", help="replace demo households that exist"
        )
        parser.add_argument(
            "--login",
            action="store_true",
            help="print a new password and API token for the first demo admin",
        )
        parser.add_argument(
            "--address",
            default="127.0.0.1:8000",
            help="where the app is served, for the URLs --login prints",
        )

    def handle(self, *args, reset: bool, login: bool, address: str, **options) -> None:
        bundles = sorted(DEMO_DIR.glob("*.json"))
        for path in bundles:
            bundle = read_bundle(path)
            slug = bundle["household"]["slug"]
            household = Household.objects.filter(slug=slug).first()
            if household is not None and not reset:
                self.stdout.write(f"Demo household {slug!r} exists; left as it is.")
                if not NameWord.objects.filter(household=household).exists():
                    # Made before names were embedded word by word.
                    index_household(household=household)
                continue
            try:
                import_household(bundle=bundle, replace=reset)
            except BundleError as error:
                for problem in error.problems:
                    self.stderr.write(problem)
                raise CommandError(f"{path.name} is not a valid bundle.") from error
            self.stdout.write(f"Loaded demo household {slug!r} from {path.name}.")
        if login and bundles:
            self._print_login(
                read_bundle(bundles[0])["household"]["slug"], address=address
            )

    @transaction.atomic
    def _print_login(self, slug: str, *, address: str) -> None:
        membership = (
            Membership.objects.select_related("profile__user")
            .filter(household__slug=slug, role=Role.ADMIN, profile__user__isnull=False)
            .order_by("pk")
            .first()
        )
        if membership is None:
            raise CommandError(f"Demo household {slug!r} has no admin with a login.")
        user = membership.profile.user
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.is_staff = True
        user.save()
        _, token = issue_token(profile=membership.profile, name="demo")
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"Admin login:  {user.username} / {password}",
                    f"              http://{address}/admin/",
                    f"API token:    {token}",
                    "  curl -H 'Authorization: Bearer <token>' "
                    f"http://{address}/api/skills/",
                    "",
                ]
            )
        )
