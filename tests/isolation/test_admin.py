"""Django admin, as one group: A's household admin never reaches a row of B.

Every registered model is covered by iterating the admin site's registry, so a
model registered later is covered without a new test.
"""

import re
from html import unescape

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, models
from django.test import Client
from django.urls import NoReverseMatch, reverse

from contacts.models import Contact, PaperlessCorrespondent
from household.models import CalendarEvent, Household, Lead, Membership
from tests.builders import build_member
from tests.isolation.world import B_SURNAME, INACTIVE_STATUSES, Side, World, shows_b
from yorik.models import Card

pytestmark = pytest.mark.django_db

ADMIN_MODELS = sorted(model._meta.label_lower for model in admin.site._registry)


def rows_of(side: Side, model: type[models.Model]) -> list[models.Model]:
    """Return a row of the household of a model the admin registers, if any.

    One row per model is enough: the admin scopes by model, not by row.
    """
    if model is Household:
        return [side.household]
    if model is get_user_model():
        return [side.admin.profile.user]
    if any(field.name == "household" for field in model._meta.get_fields()):
        return list(model.objects.filter(household=side.household)[:1])
    return []


def admin_url(model: type[models.Model], view: str, *args: object) -> str:
    return reverse(
        f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args
    )


@pytest.fixture
def a_admin(world: World, browser_of) -> Client:
    return browser_of(world.a.admin)


def assert_out_of_reach(response) -> None:
    """A foreign row's page is refused, or redirects to the index saying so."""
    assert response.status_code in {200, 403, 404}
    if response.status_code == 200:
        assert response.redirect_chain[-1][0] == reverse("admin:index")
    assert not shows_b(response.content.decode())


def test_the_world_gives_every_household_model_rows_in_b(world):
    for label in ADMIN_MODELS:
        model = apps.get_model(label)
        if model._meta.label == "auth.Group":
            continue
        assert rows_of(world.b, model), f"Add rows of {label} to B's world."


def model_admin_views() -> list[tuple[str, str]]:
    """Return (model, route) of every view of every registered model admin."""
    return sorted(
        (model._meta.label_lower, str(pattern.pattern))
        for model, model_admin in admin.site._registry.items()
        for pattern in model_admin.get_urls()
    )


def view_url(label: str, route: str, *pks: object) -> str:
    """Return the URL of a model admin's view, its row arguments set to pks.

    A view of two rows (a pair of contacts) gets the last pk for both unless
    two are given.
    """
    model_path = label.replace(".", "/")
    values = iter(pks)
    last = [None]

    def next_pk(match: re.Match) -> str:
        last[0] = next(values, last[0])
        return str(last[0])

    row_route = re.sub(r"<[^>]+>", next_pk, route)
    return f"{reverse('admin:index')}{model_path}/{row_route}"


def row_pairs(side: Side, model: type[models.Model], route: str) -> list[tuple]:
    """Return the rows to name in a row view: one, or two of a pair view."""
    rows = rows_of(side, model)
    if route.count("<") < 2 or not rows:
        return [(row.pk,) for row in rows]
    pair = list(model.objects.filter(household=side.household).order_by("pk")[:2])
    return [tuple(row.pk for row in pair)] if len(pair) == 2 else []


ROW_VIEWS = [(label, route) for label, route in model_admin_views() if "<" in route]
MODEL_VIEWS = [
    (label, route) for label, route in model_admin_views() if "<" not in route
]


@pytest.mark.parametrize(("label", "route"), ROW_VIEWS)
def test_bs_rows_are_out_of_reach(world, a_admin, label, route):
    model = apps.get_model(label)
    for pks in row_pairs(world.b, model, route):
        response = a_admin.get(view_url(label, route, *pks), follow=True)

        assert_out_of_reach(response)
    if route.count("<") == 2:  # A pair: one of A's contacts, one of B's.
        [(a_pk,)], [(b_pk,)] = (
            row_pairs(world.a, model, ""),
            row_pairs(world.b, model, ""),
        )
        assert_out_of_reach(a_admin.get(view_url(label, route, a_pk, b_pk)))
        assert_out_of_reach(a_admin.get(view_url(label, route, b_pk, a_pk)))


@pytest.mark.parametrize(("label", "route"), MODEL_VIEWS)
def test_model_views_show_nothing_of_b(a_admin, label, route):
    """Change lists, add forms and custom views such as the vCard import."""
    response = a_admin.get(view_url(label, route), follow=True)

    assert response.status_code in {200, 403}
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize("label", ADMIN_MODELS)
def test_bs_rows_cannot_be_deleted(world, a_admin, label):
    model = apps.get_model(label)

    for row in rows_of(world.b, model):
        a_admin.post(admin_url(model, "delete", row.pk), {"post": "yes"})
        a_admin.post(
            admin_url(model, "changelist"),
            {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"},
        )
        assert model.objects.filter(pk=row.pk).exists()


@pytest.mark.parametrize(
    "query",
    [{"q": B_SURNAME}, {"household__id__exact": "b"}, {"household": "b"}],
    ids=["search", "household filter", "household lookup"],
)
@pytest.mark.parametrize("label", ADMIN_MODELS)
def test_changelists_show_nothing_of_b(world, a_admin, label, query):
    model = apps.get_model(label)
    params = {
        key: world.b.household.pk if value == "b" else value
        for key, value in query.items()
    }

    response = a_admin.get(admin_url(model, "changelist"), params, follow=True)

    assert response.status_code in {200, 400, 403}
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize(("label", "route"), ROW_VIEWS)
def test_own_rows_views_show_nothing_of_b(world, a_admin, label, route):
    """Foreign-key choices, inlines and deletion summaries stay in the household."""
    if settings.YORIK_CITUS and route.endswith("/delete/"):
        # Django's deletion summary reads each row to be deleted with the row
        # it belongs to joined: for a member's conversations, the member, on
        # the coordinator. Citus answers that by sending the coordinator's
        # rows along, as the app's connections allow and the Citus suite
        # otherwise refuses (tests/conftest.py).
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL citus.local_table_join_policy = auto")
    rows = row_pairs(world.a, apps.get_model(label), route)
    for pks in rows:
        response = a_admin.get(view_url(label, route, *pks), follow=True)

        assert response.status_code in {200, 403}
        assert not shows_b(response.content.decode())


def autocomplete_fields() -> list[tuple[str, str]]:
    """Return (model, field) of every relation whose target admin can search."""
    found = []
    for model in admin.site._registry:
        for field in model._meta.get_fields():
            target = getattr(field, "related_model", None)
            if (
                field.concrete
                and target in admin.site._registry
                and admin.site._registry[target].search_fields
            ):
                found.append((model._meta.label_lower, field.name))
    return sorted(found)


@pytest.mark.parametrize("term", ["", B_SURNAME])
@pytest.mark.parametrize(("label", "field"), autocomplete_fields())
def test_autocomplete_offers_nothing_of_b(a_admin, label, field, term):
    app_label, model_name = label.split(".")

    response = a_admin.get(
        reverse("admin:autocomplete"),
        {
            "app_label": app_label,
            "model_name": model_name,
            "field_name": field,
            "term": term,
        },
    )

    assert response.status_code in {200, 403, 404}
    assert not shows_b(response.content.decode())


@pytest.mark.parametrize(
    "label",
    [
        label
        for label in ADMIN_MODELS
        if hasattr(apps.get_model(label), "get_absolute_url")
    ],
)
def test_view_on_site_of_bs_rows_leads_nowhere(world, a_admin, label):
    model = apps.get_model(label)
    missing = a_admin.get(view_on_site_url(model, "2147483647"))
    for row in rows_of(world.b, model):
        response = a_admin.get(view_on_site_url(model, row.pk))

        # Not even a redirect: a 302 would tell that the id exists somewhere.
        assert response.status_code == 404
        assert response.content == missing.content
        assert not shows_b(response.content.decode())


def view_on_site_url(model: type[models.Model], pk: object) -> str:
    content_type = ContentType.objects.get_for_model(model)
    try:
        return reverse("admin:view_on_site", args=[content_type.pk, pk])
    except NoReverseMatch:
        pytest.fail("The admin lost its view-on-site route: update this test.")


def test_view_on_site_leads_to_own_contacts_only(world, a_admin):
    """The control: A's own contact redirects; A's own cards are no admin's."""
    contact = a_admin.get(view_on_site_url(Contact, world.a.contact.pk))
    card = a_admin.get(view_on_site_url(Card, world.a.cards["contacts_found"].pk))

    assert contact.status_code == 302
    assert contact.url.endswith(world.a.contact.get_absolute_url())
    assert card.status_code == 404


@pytest.mark.parametrize("status", INACTIVE_STATUSES)
def test_an_offboarded_admin_reaches_no_row_of_their_household(
    world, browser_of, status
):
    """Staff still, but a pending, paused or cancelled admin administers nothing."""
    browser = browser_of(world.a.dead_members[f"{status} admin"])

    index = browser.get(reverse("admin:index"))
    assert index.status_code == 200
    for label, route in MODEL_VIEWS:
        assert view_url(label, route) not in index.content.decode()
    for label, route in ROW_VIEWS:
        model = apps.get_model(label)
        for row in rows_of(world.a, model):
            response = browser.get(view_url(label, route, row.pk), follow=True)
            assert_out_of_reach(response)
            assert world.a.contact.display_name not in response.content.decode()
    for label in ["contacts.contact", "household.membership", "household.lead"]:
        changelist = browser.get(admin_url(apps.get_model(label), "changelist"))
        assert changelist.status_code == 403
    view_on_site = browser.get(view_on_site_url(Contact, world.a.contact.pk))
    assert view_on_site.status_code == 404


def test_admin_index_shows_nothing_of_b(a_admin):
    for url in [reverse("admin:index"), "/admin/household/", "/admin/contacts/"]:
        assert not shows_b(a_admin.get(url).content.decode())


def test_a_member_who_is_not_staff_gets_no_admin(world, browser_of):
    browser = browser_of(world.a.members["member"])

    response = browser.get(admin_url(Membership, "changelist"))

    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))


FORMS = ["lead with an owner", "event with an attendee", "membership of a profile"]


def add_form(side: Side, form: str) -> tuple[type[models.Model], dict]:
    """Return an add form whose relation field names a row of the side."""
    member = side.members["viewer"]
    return {
        "lead with an owner": (
            Lead,
            {"first_name": "Eve", "status": "new", "owner": member.pk},
        ),
        "event with an attendee": (
            CalendarEvent,
            {
                "title": "Treffen",
                "starts_at_0": "2025-01-01",
                "starts_at_1": "10:00:00",
                "eventattendee_set-TOTAL_FORMS": "1",
                "eventattendee_set-INITIAL_FORMS": "0",
                "eventattendee_set-0-userprofile": member.profile.pk,
            },
        ),
        # A profile of the side without a membership, which the form would add.
        "membership of a profile": (
            Membership,
            {"profile": member.profile.pk, "role": "admin", "status": "active"},
        ),
    }[form]


@pytest.mark.parametrize("form", FORMS)
def test_add_forms_refuse_bs_rows_as_choices(world, a_admin, form):
    model, data = add_form(world.b, form)
    before = model.objects.count()

    response = a_admin.post(admin_url(model, "add"), data)

    assert response.status_code == 200
    assert "Bitte eine gültige Auswahl treffen" in response.content.decode()
    assert model.objects.count() == before


@pytest.mark.parametrize("form", FORMS[:2])
def test_add_forms_take_own_rows(world, a_admin, form):
    """The control: the same forms with A's rows are saved."""
    model, data = add_form(world.a, form)
    before = model.objects.count()

    response = a_admin.post(admin_url(model, "add"), data)

    assert response.status_code == 302
    assert model.objects.count() == before + 1


@pytest.mark.parametrize("status", [*INACTIVE_STATUSES, "removed"])
def test_an_offboarded_admin_sees_none_of_their_recent_actions(
    world, browser_of, status
):
    admin = build_member(world.a.household, f"ex-{status}", role="admin")
    contact = world.a.contact
    LogEntry.objects.log_actions(
        user_id=admin.profile.user_id,
        queryset=Contact.objects.filter(pk=contact.pk),
        action_flag=CHANGE,
        change_message="Renamed.",
    )
    browser = browser_of(admin)
    change_url = admin_url(Contact, "change", contact.pk)

    while_active = browser.get(reverse("admin:index")).content.decode()
    Membership.objects.filter(pk=admin.pk).update(status=status)
    offboarded = browser.get(reverse("admin:index"))

    assert change_url in while_active
    html = offboarded.content.decode()
    assert offboarded.status_code == 200
    assert 'id="recent-actions-module"' not in html
    assert change_url not in html
    assert contact.display_name not in html


@pytest.fixture
def superuser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root"))
    return client


@pytest.mark.parametrize("label", ADMIN_MODELS)
def test_every_change_list_refuses_a_lookup_it_does_not_offer(
    a_admin, superuser, label
):
    model = apps.get_model(label)
    lookup = {f"{model._meta.pk.name}__regex": "("}

    own = a_admin.get(admin_url(model, "changelist"), lookup)
    root = superuser.get(admin_url(model, "changelist"), lookup)

    assert own.status_code in {400, 403}
    assert root.status_code == 400


def filter_links(html: str) -> set[str]:
    """Return the change list's links that filter it: by a field or by date."""
    return {
        unescape(link)
        for link in re.findall(r'href="(\?[^"]*)"', html)
        if "__" in unescape(link)
    }


@pytest.mark.parametrize("label", ADMIN_MODELS)
def test_every_filter_link_of_every_change_list_is_taken(
    world, a_admin, superuser, label
):
    """The lookups the lists take are the ones their own filters write."""
    model = apps.get_model(label)
    changelist = admin_url(model, "changelist")
    for browser in (a_admin, superuser):
        page = browser.get(changelist)
        if page.status_code == 403:
            continue
        for link in filter_links(page.content.decode()):
            response = browser.get(changelist + link)

            assert response.status_code == 200, link


def bs_related_row(side: Side, label: str) -> models.Model:
    return {
        "household.lead": side.admin,
        "household.calendarevent": side.admin.profile,
        "contacts.paperlessdocument": PaperlessCorrespondent.objects.filter(
            household=side.household
        ).first(),
    }[label]


@pytest.mark.parametrize(
    ("label", "parameter"),
    [
        ("household.lead", "owner__id__exact"),
        ("household.calendarevent", "attendees__id__exact"),
        ("contacts.paperlessdocument", "correspondent__id__exact"),
    ],
)
def test_a_search_box_filter_names_nothing_of_b(world, a_admin, label, parameter):
    """The filter's box shows the row filtered by only if it is A's own."""
    model = apps.get_model(label)

    response = a_admin.get(
        admin_url(model, "changelist"),
        {parameter: bs_related_row(world.b, label).pk},
    )
    control = a_admin.get(
        admin_url(model, "changelist"),
        {parameter: bs_related_row(world.a, label).pk},
    )

    assert response.status_code == 200
    assert not shows_b(response.content.decode())
    assert f'value="{bs_related_row(world.a, label).pk}" selected' in (
        control.content.decode()
    )
