from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PeopleSearchConfig(AppConfig):
    name = "people_search"
    verbose_name = _("People search")
