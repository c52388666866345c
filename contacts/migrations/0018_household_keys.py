from django.db import migrations

from yorik.tenancy import HouseholdKeys


class Migration(migrations.Migration):
    """Key the household's tables by (household_id, id), with composite
    foreign keys between them, so that Citus can distribute them."""

    dependencies = [
        ("contacts", "0017_household_foreign_keys"),
        ("yorik", "0010_household_foreign_keys"),
        ("people_search", "0011_household_foreign_keys"),
    ]

    operations = [
        HouseholdKeys("Contact"),
        HouseholdKeys("PaperlessCorrespondent"),
        HouseholdKeys("CardDavAccount"),
        HouseholdKeys("ContactAlias"),
        HouseholdKeys("ContactChannel"),
        HouseholdKeys("Address"),
        HouseholdKeys("PaperlessDocument"),
        HouseholdKeys("CardDavCard"),
        HouseholdKeys("ContactMerge"),
        HouseholdKeys("DismissedDuplicate"),
        HouseholdKeys("VCardUpload"),
    ]
