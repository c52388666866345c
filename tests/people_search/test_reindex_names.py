from django.core.management import call_command

from people_search.models import NameEmbedding
from tests.builders import build_lead


def test_reindex_names_rebuilds_missing_embeddings(household, capsys):
    lead = build_lead(household, "Dana", last_name="Levi")
    NameEmbedding.objects.all().delete()

    call_command("reindex_names", household="becker")

    assert "Embedded" in capsys.readouterr().out
    assert set(
        NameEmbedding.objects.filter(subject="lead", subject_id=lead.pk).values_list(
            "name", flat=True
        )
    ) == {"dana levi", "dana", "levi"}
