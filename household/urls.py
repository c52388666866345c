from django.urls import re_path

from household import views

app_name = "dashboard"

# DESIGN §5 fixes these paths, without a trailing slash.
urlpatterns = [
    re_path(
        r"^(?P<lang>de|en)/dashboard/members/(?P<membership_id>[0-9]+)$",
        views.member_detail,
        name="member",
    ),
    re_path(r"^(?P<lang>de|en)/dashboard/leads$", views.lead_list, name="leads"),
]
