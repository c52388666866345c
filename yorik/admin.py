"""Admin for API tokens and the cards the assistant emitted."""

from collections.abc import Sequence

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from household.admin_scoping import HouseholdScopedAdmin
from yorik.models import ApiToken, Card


@admin.register(ApiToken)
class ApiTokenAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    """List and revoke tokens; `manage.py issue_token` issues them."""

    list_display = [
        "prefix",
        "name",
        "profile",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "profile__username", "profile__last_name"]
    list_select_related = ["profile"]
    fields = [
        "household",
        "prefix",
        "name",
        "profile",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_readonly_fields(
        self, request: HttpRequest, obj: ApiToken | None = None
    ) -> Sequence[str]:
        # Only the label may change: a token is revoked through the action,
        # which dates the revocation, and never moves to another profile.
        return [
            *super().get_readonly_fields(request, obj),
            "prefix",
            "profile",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    @admin.action(description="Revoke selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


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
