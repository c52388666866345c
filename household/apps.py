from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HouseholdConfig(AppConfig):
    name = "household"
    verbose_name = _("Household")
