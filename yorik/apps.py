from django.apps import AppConfig


class YorikConfig(AppConfig):
    name = "yorik"
    verbose_name = "Yorik"
