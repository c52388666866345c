from django.db import migrations
from django.db.models import Q

from contacts.providers.categories import provider_tokens

BATCH = 1000


def file_providers(apps, schema_editor):
    """Add the provider categories of businesses and tagged contacts to concepts."""
    contacts = apps.get_model("contacts", "Contact").objects.filter(
        Q(kind="business") | ~Q(tags=[])
    )
    last_pk = 0
    while batch := list(contacts.filter(pk__gt=last_pk).order_by("pk")[:BATCH]):
        for contact in batch:
            tokens = provider_tokens(
                kind=contact.kind, display_name=contact.display_name, tags=contact.tags
            )
            contact.concepts = sorted({*contact.concepts, *tokens})
        contacts.bulk_update(batch, ["concepts"])
        last_pk = batch[-1].pk


class Migration(migrations.Migration):

    dependencies = [
        ("contacts", "0009_carddav_names"),
    ]

    operations = [
        migrations.RunPython(file_providers, migrations.RunPython.noop),
    ]
