from django.db import migrations

from yorik.tenancy import HouseholdKeys


class Migration(migrations.Migration):
    """Key the household's tables by (household_id, id), with composite
    foreign keys between them, so that Citus can distribute them."""

    dependencies = [
        ("yorik", "0010_household_foreign_keys"),
        ("contacts", "0018_household_keys"),
    ]

    operations = [
        HouseholdKeys("Card"),
    ]
