"""Names are embedded after the write that changed them commits, never before."""

import pytest
from django.db import transaction

from contacts.services import create_contact
from household.services import create_lead
from people_search.index.models import NameWordUse


def words_of(subject, row):
    return set(
        NameWordUse.objects.filter(subject=subject, subject_id=row.pk).values_list(
            "word__word", flat=True
        )
    )


def test_a_new_leads_name_is_embedded_only_once_the_write_commits(
    household, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        lead = create_lead(household=household, first_name="Dana", last_name="Levi")

        assert words_of("lead", lead) == set()

    for callback in callbacks:
        callback()
    assert words_of("lead", lead) == {"dana", "levi"}


def test_a_bulk_write_embeds_its_names_in_one_go(
    household, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        contacts = [
            create_contact(household=household, display_name=f"Anna {last}")
            for last in ("Roth", "Rothe", "Roder")
        ]

    assert [words_of("contact", c) for c in contacts] == [
        {"anna", "roth"},
        {"anna", "rothe"},
        {"anna", "roder"},
    ]
    assert household.nameword_set.filter(word="anna").count() == 1


def test_a_rolled_back_write_leaves_no_words_and_later_writes_still_index(
    household, django_capture_on_commit_callbacks
):
    def write_then_fail():
        with transaction.atomic():
            create_contact(household=household, display_name="Gustav Gone")
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        write_then_fail()

    with django_capture_on_commit_callbacks(execute=True):
        kept = create_contact(household=household, display_name="Klara Kept")

    assert words_of("contact", kept) == {"klara", "kept"}
    assert not NameWordUse.objects.filter(word__word="gustav").exists()
