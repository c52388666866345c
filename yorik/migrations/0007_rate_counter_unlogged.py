from django.db import migrations


class Migration(migrations.Migration):
    """Rate counters skip the write-ahead log.

    A count lives for one window; losing the counts in a crash only gives
    every token a fresh window. Without WAL the counting statement commits
    without waiting for a disk flush: 0.4 ms a request instead of 1.4 ms.
    """

    dependencies = [
        ("yorik", "0006_translatable_names"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE yorik_ratecounter SET UNLOGGED",
            reverse_sql="ALTER TABLE yorik_ratecounter SET LOGGED",
        ),
    ]
