from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HouseholdConfig(AppConfig):
    name = "household"
    verbose_name = _("Household")

    def ready(self) -> None:
        from household.models import Lead, Membership
        from yorik.sizes import count_rows_of

        count_rows_of(Membership, Lead)
