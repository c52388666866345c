"""API tokens the assistant backend authenticates with, and the cards it emits."""

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from yorik.tenancy import HouseholdForeignKey, HouseholdRow


class ApiToken(HouseholdRow):
    """A bearer token of one user profile; only its SHA-256 hash is stored."""

    household = models.ForeignKey(
        "household.Household", on_delete=models.CASCADE, verbose_name=_("household")
    )
    profile = models.ForeignKey(
        "household.UserProfile",
        on_delete=models.CASCADE,
        related_name="api_tokens",
        verbose_name=_("profile"),
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        _("prefix"),
        max_length=12,
        editable=False,
        help_text=_("First characters, to tell tokens apart."),
    )
    name = models.CharField(max_length=100, blank=True, verbose_name=_("name"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    last_used_at = models.DateTimeField(
        _("last used at"), null=True, blank=True, editable=False
    )
    revoked_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("revoked at")
    )

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.profile})"


class Card(HouseholdRow):
    """A result the assistant shows as a page the person can pick from."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    household = models.ForeignKey(
        "household.Household", on_delete=models.CASCADE, verbose_name=_("household")
    )
    kind = models.CharField(
        max_length=32,
        help_text=_("A kind declared in an app's cards.py."),
        verbose_name=_("kind"),
    )
    payload = models.JSONField(default=dict, verbose_name=_("payload"))
    pick_to_chat = models.BooleanField(default=True, verbose_name=_("pick to chat"))
    created_by = models.ForeignKey(
        "household.UserProfile",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    picked_contact = HouseholdForeignKey(
        "contacts.Contact",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("picked contact"),
    )
    picked_profile = models.ForeignKey(
        "household.UserProfile",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("The household member picked, on a card that lists members."),
        verbose_name=_("picked member"),
    )
    declined = models.BooleanField(
        default=False,
        help_text=_("The person chose “none of these”."),
        verbose_name=_("none of these"),
    )
    picked_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("When the latest answer (a pick or “none of these”) was given."),
        verbose_name=_("picked at"),
    )
    # A card's page sends the count it was shown with: an answer from a page
    # shown before the latest answer is told apart from a change of mind.
    answers = models.PositiveIntegerField(
        default=0,
        help_text=_("How many times the card was answered."),
        verbose_name=_("answers"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    expires_at = models.DateTimeField(verbose_name=_("expires at"))

    class Meta:
        verbose_name = _("card")
        verbose_name_plural = _("cards")
        indexes = [models.Index(fields=["household", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"

    def get_absolute_url(self) -> str:
        return f"/cards/{self.id}/"


class RateCounter(models.Model):
    """Requests counted for one key (scope and token) in one fixed time window.

    A request adds one in a single INSERT … ON CONFLICT DO UPDATE … RETURNING,
    so every app server counts the same requests, exactly, without a
    read-modify-write. The table is unlogged (migration 0007): a crash of
    PostgreSQL empties it, which starts every window afresh, and counting
    waits for no disk flush.
    """

    key = models.CharField(max_length=100, verbose_name=_("key"))
    window = models.BigIntegerField(
        help_text=_("Seconds since the epoch // window."), verbose_name=_("window")
    )
    hits = models.PositiveIntegerField(default=0, verbose_name=_("hits"))

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key", "window"], name="rate_counter_key_window"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} @ {self.window}: {self.hits}"
