from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.utils.module_loading import autodiscover_modules


class YorikConfig(AppConfig):
    default = True
    name = "yorik"
    verbose_name = "Yorik"

    def ready(self) -> None:
        from yorik import openapi  # noqa: F401 - registers the schema extension

        # Skills and card kinds register themselves when their app's skills.py
        # and cards.py are imported.
        autodiscover_modules("cards")
        autodiscover_modules("skills")


class YorikAdminConfig(admin_apps.AdminConfig):
    """Django admin, with the project's site (yorik.admin_site) as its default."""

    default = False
    default_site = "yorik.admin_site.YorikAdminSite"
