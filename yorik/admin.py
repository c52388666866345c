"""Admin for the assistant's cards and for logins (household admin lists API tokens)."""

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth.models import Group, User
from django.http import HttpRequest

from yorik.admin_site import StrictChangeListAdmin
from yorik.models import Card


@admin.register(Card)
class CardAdmin(StrictChangeListAdmin, admin.ModelAdmin):
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


# Django's admins of logins and groups, with the change-list rules of every
# admin of the site.
admin.site.unregister([User, Group])


@admin.register(User)
class UserAdmin(StrictChangeListAdmin, auth_admin.UserAdmin):
    """Django's admin of logins."""


@admin.register(Group)
class GroupAdmin(StrictChangeListAdmin, auth_admin.GroupAdmin):
    """Django's admin of permission groups."""
