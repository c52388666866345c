from django.apps import AppConfig


class PeopleSearchConfig(AppConfig):
    name = "people_search"
    verbose_name = "People search"
