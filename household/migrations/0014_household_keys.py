from django.db import migrations

from yorik.tenancy import HouseholdKeys


class Migration(migrations.Migration):
    """Key the household's tables by (household_id, id), with composite
    foreign keys between them, so that Citus can distribute them."""

    dependencies = [
        ("household", "0013_event_attendees_and_household_foreign_keys"),
    ]

    operations = [
        HouseholdKeys("Lead"),
        HouseholdKeys("CalendarEvent"),
        HouseholdKeys("EventAttendee"),
        HouseholdKeys("Conversation"),
        HouseholdKeys("ModelUsage"),
    ]
