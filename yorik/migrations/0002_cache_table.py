from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    # A no-op unless a database cache is configured (YORIK_CACHE=database).
    call_command("createcachetable", database=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("yorik", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
