from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ComposeConfig(AppConfig):
    name = "compose"
    verbose_name = _("Letters")
