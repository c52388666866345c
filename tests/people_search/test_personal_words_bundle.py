"""People's own words travel in the household bundle and go with their membership."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from household.models import Household, Membership
from people_search.models import PersonalWord
from tests.household.test_bundles import bundle
from yorik.bundles import BundleError, export_household, import_household


def with_words(**words):
    data = bundle()
    for person in data["people"]:
        person.update(words.get(person["username"], {}))
    return data


WORDS = {
    "anna": {
        "relation_words": [
            {"word": "mein Lieblingsonkel", "contact": "c1"},
            {"word": "meine Kleine", "person": "mia"},
        ],
        "name_choices": [{"query": "Hans", "contact": "c1"}],
    },
    "mia": {"relation_words": [{"word": "Mama", "person": "anna"}]},
}


@pytest.mark.django_db
def test_words_round_trip_through_export_and_import(tmp_path):
    household = import_household(bundle=with_words(**WORDS))

    exported = export_household(household=household)
    assert {
        p["username"]: {k: p[k] for k in WORDS[p["username"]]}
        for p in exported["people"]
    } == WORDS
    first = tmp_path / "first.json"
    call_command("export_household", "becker", out=first)
    Household.objects.all().delete()
    get_user_model().objects.all().delete()
    call_command("import_household", str(first))
    second = tmp_path / "second.json"
    call_command("export_household", "becker", out=second)
    assert first.read_text() == second.read_text()


@pytest.mark.django_db
def test_imported_words_answer_their_speaker(api_as):
    household = import_household(bundle=with_words(**WORDS))
    anna = Membership.objects.get(household=household, profile__username="anna")
    hans = household.contacts.get(ref="c1")

    found = api_as(anna).call("find_person", {"query": "Lieblingsonkel"}).json()

    assert found["results"][0]["id"] == hans.pk
    assert found["results"][0]["match"] == "learned"


@pytest.mark.django_db
def test_words_naming_nobody_in_the_bundle_are_reported_with_their_paths():
    bad = with_words(
        anna={
            "relation_words": [
                {"word": "Onkel", "contact": "c9"},
                {"word": "ich", "person": "anna"},
                {"word": "Tante", "person": "zoe"},
                {"word": "Opa", "contact": "c1", "person": "mia"},
            ],
            "name_choices": [{"query": "42", "contact": "c1"}],
        }
    )

    with pytest.raises(BundleError) as error:
        import_household(bundle=bad)

    assert error.value.problems == [
        "people[0].relation_words[3].contact: give exactly one of contact and person",
        "people[0].relation_words[0].contact: no contact 'c9' in contacts",
        "people[0].relation_words[1].person: a person's own word for themselves",
        "people[0].relation_words[2].person: no person 'zoe' in people",
        "people[0].name_choices[0]: a word needs at least one letter",
    ]
    assert not Household.objects.exists()


@pytest.mark.django_db
def test_a_members_own_words_go_with_their_membership():
    household = import_household(bundle=with_words(**WORDS))
    anna = Membership.objects.get(household=household, profile__username="anna")

    anna.delete()

    assert list(PersonalWord.objects.values_list("word", flat=True)) == ["Mama"]
