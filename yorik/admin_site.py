"""The project's admin site: Django's, with view-on-site scoped like every admin view.

Django's `/admin/r/<content_type>/<id>/` redirects any staff user to any
object's page, so its 302 or 404 would tell whether an id exists in another
household. Here it redirects only to objects the model's own admin shows the
user; every other object answers 404, the same as one that does not exist.
"""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.contenttypes.models import ContentType
from django.contrib.contenttypes.views import shortcut
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, path


class YorikAdminSite(admin.AdminSite):
    def get_urls(self) -> list[URLPattern | URLResolver]:
        scoped = path(
            "r/<int:content_type_id>/<path:object_id>/",
            self.admin_view(self.view_on_site),
            name="view_on_site",
        )
        return [
            scoped if getattr(url, "name", None) == "view_on_site" else url
            for url in super().get_urls()
        ]

    def view_on_site(
        self, request: HttpRequest, content_type_id: int, object_id: str
    ) -> HttpResponse:
        """Redirect to the object's page if the user's admin of its model shows it."""
        content_type = ContentType.objects.filter(pk=content_type_id).first()
        model = content_type.model_class() if content_type else None
        model_admin = self._registry.get(model) if model else None
        obj = (
            model_admin.get_object(request, unquote(object_id)) if model_admin else None
        )
        if obj is None or not model_admin.has_view_or_change_permission(request, obj):
            raise Http404("No such object.")
        return shortcut(request, content_type_id, object_id)
