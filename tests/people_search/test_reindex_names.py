from django.core.management import call_command

from people_search.index.models import NameWord, NameWordUse
from tests.builders import build_lead


def test_reindex_names_rebuilds_missing_embeddings(household, capsys):
    lead = build_lead(household, "Dana", last_name="Levi")
    NameWord.objects.all().delete()

    call_command("reindex_names", household="becker")

    assert "Embedded" in capsys.readouterr().out
    assert set(
        NameWordUse.objects.filter(subject="lead", subject_id=lead.pk).values_list(
            "word__word", flat=True
        )
    ) == {"dana", "levi"}
