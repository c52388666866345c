from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from yorik import api, mcp, views
from yorik.registry import all_skills

handler403 = "yorik.errors.permission_denied"
handler404 = "yorik.errors.page_not_found"
handler500 = "yorik.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("cards/<uuid:card_id>/", views.card_page, name="card"),
    path("cards/<uuid:card_id>/pick/", views.pick_card, name="card-pick"),
    path(
        "cards/<uuid:card_id>/contacts/<int:contact_id>/",
        views.card_contact_page,
        name="card-contact",
    ),
    path("contacts/", include("contacts.urls")),
    path("api/cards/<uuid:card_id>/", api.CardDetailView.as_view(), name="card-detail"),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(
            authentication_classes=[], permission_classes=[AllowAny]
        ),
        name="schema",
    ),
    path("mcp/", mcp.build_server(all_skills()), name="mcp"),
    path(
        ".well-known/oauth-protected-resource",
        mcp.protected_resource_metadata,
        name="oauth-protected-resource",
    ),
    path("", include("people_search.urls")),
    path("", include("household.urls")),
    path("api/skills/", api.SkillListView.as_view(), name="skill-list"),
    path("api/skills/tools/", api.ToolListView.as_view(), name="skill-tools"),
    # One route per skill, so the OpenAPI schema documents each one's bodies.
    *(
        path(
            f"api/skills/{skill.name}/call/",
            api.skill_call_view(skill).as_view(),
            name=f"skill-call-{skill.name}",
        )
        for skill in all_skills()
    ),
    path("api/skills/<str:name>/", api.SkillDetailView.as_view(), name="skill-detail"),
    path(
        "api/skills/<str:name>/call/", api.AnySkillCallView.as_view(), name="skill-call"
    ),
]
