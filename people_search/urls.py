from django.urls import path, re_path

from people_search import views

urlpatterns = [
    path("api/agent/turns/", views.TurnView.as_view(), name="agent-turns"),
    path("api/agent/usage/", views.UsageView.as_view(), name="agent-usage"),
    path("cards/<uuid:card_id>/forget/", views.forget_pick, name="card-forget"),
    re_path(r"^(?P<lang>de|en)/dashboard/words$", views.my_words, name="my-words"),
]
