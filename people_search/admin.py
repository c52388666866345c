"""Admin for the words members taught Yorik: seen per member, deleted, not edited."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from household.admin_scoping import (
    AutocompleteFilter,
    HouseholdScopedAdmin,
    request_household,
)
from people_search.models import PersonalWord
from people_search.personal_words import delete_word, in_household


@admin.register(PersonalWord)
class PersonalWordAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    """A member's words are theirs to teach: the admin sees and deletes them."""

    list_display = ["word", "kind", "member", "target", "created_at"]
    list_filter = [("member", AutocompleteFilter), "kind"]
    list_select_related = ["member__profile", "contact", "person"]
    search_fields = ["word"]
    ordering = ["member", "word", "pk"]
    fields = ["household", "member", "kind", "word", "target", "created_at"]
    readonly_fields = fields

    @admin.display(description=_("means"))
    def target(self, obj: PersonalWord) -> str:
        return obj.target_name

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: PersonalWord | None = None
    ) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: PersonalWord) -> None:
        delete_word(member=obj.member, word_id=obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[PersonalWord]:
        words = super().get_queryset(request)
        household = request_household(request)
        if household is None:
            return words
        return words.filter(in_household(household.pk))

    def delete_queryset(
        self, request: HttpRequest, queryset: QuerySet[PersonalWord]
    ) -> None:
        for word in queryset.prefetch_related("member"):
            delete_word(member=word.member, word_id=word.pk)
