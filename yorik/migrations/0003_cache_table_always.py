from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    # By name, whatever cache is configured now: a database first migrated in
    # debug (memory cache, so 0002 created nothing) may later serve production.
    call_command(
        "createcachetable",
        "yorik_cache",
        database=schema_editor.connection.alias,
        verbosity=0,
    )


class Migration(migrations.Migration):
    dependencies = [("yorik", "0002_cache_table")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
