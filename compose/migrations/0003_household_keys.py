from django.db import migrations

from yorik.tenancy import HouseholdKeys


class Migration(migrations.Migration):
    """Key the household's tables by (household_id, id), with composite
    foreign keys between them, so that Citus can distribute them."""

    dependencies = [
        ("compose", "0002_translatable_names"),
    ]

    operations = [
        HouseholdKeys("LetterTemplate"),
    ]
