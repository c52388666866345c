"""Admin for the cards the assistant emitted (household admin lists API tokens)."""

from django.contrib import admin
from django.http import HttpRequest

from yorik.models import Card


@admin.register(Card)
class CardAdmin(admin.ModelAdmin):
    """Cards across every household, for superusers to look into."""

    list_display = [
        "id",
        "kind",
        "household",
        "created_by",
        "pick_to_chat",
        "picked_contact",
        "created_at",
        "expires_at",
    ]
    list_filter = ["kind", "pick_to_chat", "household"]
    list_select_related = ["household", "created_by", "picked_contact"]
    date_hierarchy = "created_at"

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(
        self, request: HttpRequest, obj: Card | None = None
    ) -> bool:
        # Model permissions alone would show every household's cards.
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: Card | None = None
    ) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: Card | None = None
    ) -> bool:
        return False
