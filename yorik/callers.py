"""What the framework needs to know of whoever calls a skill or opens a card.

The household app supplies the concrete caller (a member with a tier); the
framework relies on this protocol alone, so it imports no domain app.
"""

from typing import Protocol

from django.db import models


class Caller(Protocol):
    """An authenticated member: DRF's `request.user` on the agent API."""

    is_authenticated: bool

    @property
    def pk(self) -> object:
        """An id that stays this caller's: libraries key per-user state by it."""

    @property
    def tier(self) -> str:
        """The skill permission tier: admin, member or restricted."""

    @property
    def household(self) -> models.Model:
        """The household whose data the caller reads."""

    @property
    def profile(self) -> models.Model:
        """The person acting: cards record them as their creator."""
