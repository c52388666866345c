from django.apps import AppConfig


class ComposeConfig(AppConfig):
    name = "compose"
    verbose_name = "Letters"
