from django.contrib import admin
from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from yorik import api
from yorik.registry import all_skills

handler404 = "yorik.errors.page_not_found"
handler500 = "yorik.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(
            authentication_classes=[], permission_classes=[AllowAny]
        ),
        name="schema",
    ),
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
