"""Letter templates and the recipient fields each one needs."""

from django.contrib.postgres.fields import ArrayField
from django.db import models

from household.models import Household, Language


class RecipientField(models.TextChoices):
    LINE1 = "line1", "Street and number"
    LINE2 = "line2", "Address line 2"
    POSTCODE = "postcode", "Postcode"
    CITY = "city", "City"
    COUNTRY = "country", "Country"


class LetterTemplate(models.Model):
    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, related_name="letter_templates"
    )
    template_id = models.SlugField(max_length=100)
    title = models.CharField(max_length=200)
    language = models.CharField(
        max_length=2, choices=Language.choices, default=Language.GERMAN
    )
    body = models.TextField()
    recipient_fields = ArrayField(
        models.CharField(max_length=16, choices=RecipientField.choices),
        default=list,
        help_text="Address fields the recipient block needs; always street and city.",
    )

    class Meta:
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
