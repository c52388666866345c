import pytest
from django.core.management import call_command

from contacts.models import Contact
from household.models import Household


@pytest.mark.django_db
def test_seed_demo_loads_the_demo_households_once(capsys):
    call_command("seed_demo")
    counts = {h.slug: h.contacts.count() for h in Household.objects.all()}

    call_command("seed_demo")

    assert counts["becker"] >= 150
    assert "cohen" in counts
    assert {h.slug: h.contacts.count() for h in Household.objects.all()} == counts
    assert "left as it is" in capsys.readouterr().out


@pytest.mark.django_db
def test_demo_data_covers_what_the_features_need():
    call_command("seed_demo")
    becker = Household.objects.get(slug="becker")

    assert becker.contacts.filter(status="spam").exists()
    assert becker.contacts.filter(status="archived").exists()
    assert becker.contacts.filter(search_text__contains="muller").count() >= 4
    assert becker.contacts.filter(aliases__name="Oma").exists()
    assert becker.letter_templates.count() >= 3
    assert becker.calendar_events.exclude(location="").exists()
    assert Contact.objects.filter(
        household=becker, channels__value__startswith="+972"
    ).exists()


@pytest.mark.django_db
def test_seed_demo_login_prints_a_password_and_a_token(capsys):
    call_command("seed_demo", "--login")

    output = capsys.readouterr().out
    assert "Admin login:  anna / " in output
    assert "API token:    yk_" in output


@pytest.mark.django_db
def test_seed_demo_login_names_the_address_the_app_is_served_on(capsys):
    call_command("seed_demo", "--login", "--address", "127.0.0.1:8011")

    output = capsys.readouterr().out
    assert "http://127.0.0.1:8011/admin/" in output
    assert "http://127.0.0.1:8011/api/skills/" in output
    assert ":8000" not in output
