"""Letter templates and the recipient fields each one needs."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _

from household.models import Household, Language
from yorik.tenancy import HouseholdRow


class RecipientField(models.TextChoices):
    LINE1 = "line1", _("Street and number")
    LINE2 = "line2", _("Address line 2")
    POSTCODE = "postcode", _("Postcode")
    CITY = "city", _("City")
    COUNTRY = "country", _("Country")


class LetterTemplate(HouseholdRow):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="letter_templates",
        verbose_name=_("household"),
    )
    template_id = models.SlugField(max_length=100, verbose_name=_("template id"))
    title = models.CharField(max_length=200, verbose_name=_("title"))
    language = models.CharField(
        max_length=2,
        choices=Language.choices,
        default=Language.GERMAN,
        verbose_name=_("language"),
    )
    body = models.TextField(verbose_name=_("body"))
    recipient_fields = ArrayField(
        models.CharField(max_length=16, choices=RecipientField.choices),
        default=list,
        help_text=_(
            "Address fields the recipient block needs; always street and city."
        ),
        verbose_name=_("recipient fields"),
    )

    class Meta:
        verbose_name = _("letter template")
        verbose_name_plural = _("letter templates")
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "template_id"], name="letter_template_id_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(recipient_fields__contains=["line1", "city"]),
                name="letter_template_needs_street_and_city",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    recipient_fields__contained_by=RecipientField.values
                ),
                name="letter_template_fields_known",
            ),
        ]

    def __str__(self) -> str:
        return self.title
