from django.urls import path

from people_search import views

urlpatterns = [
    path("api/agent/turns/", views.TurnView.as_view(), name="agent-turns"),
    path("api/agent/usage/", views.UsageView.as_view(), name="agent-usage"),
]
