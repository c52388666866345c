"""API tokens the assistant backend authenticates with, and the cards it emits."""

import uuid

from django.db import models


class ApiToken(models.Model):
    """A bearer token of one user profile; only its SHA-256 hash is stored."""

    household = models.ForeignKey("household.Household", on_delete=models.CASCADE)
    profile = models.ForeignKey(
        "household.UserProfile", on_delete=models.CASCADE, related_name="api_tokens"
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=12,
        editable=False,
        help_text="First characters, to tell tokens apart.",
    )
    name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.profile})"


class Card(models.Model):
    """A result the assistant shows as a page the person can pick from."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    household = models.ForeignKey("household.Household", on_delete=models.CASCADE)
    kind = models.CharField(
        max_length=32, help_text="A kind declared in an app's cards.py."
    )
    payload = models.JSONField(default=dict)
    pick_to_chat = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        "household.UserProfile",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    picked_contact = models.ForeignKey(
        "contacts.Contact",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    picked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["household", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"

    def get_absolute_url(self) -> str:
        return f"/cards/{self.id}/"


class RateCounter(models.Model):
    """Requests counted for one key (scope and token) in one fixed time window.

    A request adds one in a single INSERT … ON CONFLICT DO UPDATE … RETURNING,
    so every app server counts the same requests, exactly, without a
    read-modify-write.
    """

    key = models.CharField(max_length=100)
    window = models.BigIntegerField(help_text="Seconds since the epoch // window.")
    hits = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key", "window"], name="rate_counter_key_window"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} @ {self.window}: {self.hits}"
