from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ContactsConfig(AppConfig):
    name = "contacts"
    verbose_name = _("Address book")

    def ready(self) -> None:
        from contacts.models import Contact
        from yorik.sizes import count_rows_of

        count_rows_of(Contact)
