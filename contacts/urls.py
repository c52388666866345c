from django.urls import path

from contacts import views

app_name = "contacts"

urlpatterns = [
    path("", views.contact_list, name="list"),
    path("<int:contact_id>/", views.contact_detail, name="detail"),
]
