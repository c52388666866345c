from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class YorikConfig(AppConfig):
    name = "yorik"
    verbose_name = "Yorik"

    def ready(self) -> None:
        from yorik import openapi  # noqa: F401 - registers the schema extension

        # Skills and card kinds register themselves when their app's skills.py
        # and cards.py are imported.
        autodiscover_modules("cards")
        autodiscover_modules("skills")
