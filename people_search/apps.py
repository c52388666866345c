from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.utils.translation import gettext_lazy as _


class PeopleSearchConfig(AppConfig):
    name = "people_search"
    verbose_name = _("People search")

    def ready(self) -> None:
        from contacts.models import Contact
        from household.models import Lead, Membership
        from people_search.index.models import NameWord
        from people_search.index.similar import use_lane_settings
        from yorik.sizes import count_rows_of

        connection_created.connect(use_lane_settings)
        # The tables whose size decides how a search is planned, counted
        # together (yorik.sizes).
        count_rows_of(Contact, Membership, Lead, NameWord)
