"""Admin search through the matching engine, so admins find whom the assistant finds.

A household admin typing "Oma", "grandma" or "Sepp" in a changelist's search
box gets the rows find_person would answer, strongest match first, instead
of Django's per-column `icontains`.
"""

from django.contrib.admin.views.main import ORDER_VAR
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from household.admin_scoping import request_household
from people_search.engine.query import parse_query
from people_search.index.querysets import MatchColumns, rank_matches
from people_search.index.similar import similar_name_ids
from yorik.sizes import household_rows


class EngineSearchAdmin:
    """A ModelAdmin mixin whose search box asks the matching engine.

    `match_columns` says where the model's derived columns are and
    `match_sort_name` which name orders rows of one strength. Fields in
    `also_search_fields` (a login name, say) are searched as well, as Django
    would; rows found that way keep the list's own order.
    """

    match_columns: MatchColumns
    match_sort_name: str = "sort_name"
    # Whose names the similar-name lane knows these rows by, if any.
    match_subject: str | None = None
    also_search_fields: tuple[str, ...] = ()
    # Django shows the search box only when a ModelAdmin has search fields.
    search_fields = ["search_text"]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        if not search_term.strip():
            return queryset, False
        household = request_household(request)
        # A superuser searches every household: phones are read without a region.
        region = household.default_region if household else ""
        query = parse_query(search_term, region=region)
        if query.is_empty:
            return queryset.none(), False
        found = rank_matches(queryset, query=query, columns=self.match_columns)
        if household and self.match_subject and not found.exists():
            # Nobody by name: typos are found as similar names.
            similar = similar_name_ids(
                household_id=household.pk,
                query=query,
                subjects=[self.match_subject],
                rows=household_rows(queryset.model, household_id=household.pk),
            )[self.match_subject]
            found = rank_matches(
                queryset, query=query, columns=self.match_columns, similar_ids=similar
            )
        if self.also_search_fields:
            also = Q()
            for name in self.also_search_fields:
                also |= Q(**{f"{name}__icontains": search_term.strip()})
            return queryset.filter(Q(pk__in=found.values("pk")) | also), False
        # Strongest match first, until the admin sorts by a column.
        if ORDER_VAR not in request.GET:
            found = found.order_by(
                "match_tier", "match_untitled", self.match_sort_name, "-pk"
            )
        return found, False
