from django.db import migrations

# PostgreSQL estimates each `LIKE '%term%'` of the engine's SELECTs by testing
# it against the column's most common values and histogram, 100 of each by
# default: a people search for a name with many nicknames ("Lena": 17) spent
# 1 to 1.7 ms planning each SELECT, more than running it. With 10 of each the
# same SELECTs plan in 0.2 to 0.6 ms and run as fast or faster
# (docs/performance.md, "Column statistics of the searched text"). ANALYZE
# collects them anew.
COLUMNS = {
    "contacts_contact": ["search_text", "match_text"],
    "household_lead": ["search_text", "match_text"],
    "user_profiles": ["search_text", "match_text"],
}


def statistics(target: int) -> list[str]:
    return [
        f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS {target}"
        for table, columns in COLUMNS.items()
        for column in columns
    ] + [f"ANALYZE {table}" for table in COLUMNS]


class Migration(migrations.Migration):
    dependencies = [
        ("contacts", "0012_search_indexes_short_pending_list"),
        ("household", "0010_search_indexes_short_pending_list"),
        ("people_search", "0006_search_index_short_pending_list"),
    ]

    operations = [
        migrations.RunSQL(sql=statistics(10), reverse_sql=statistics(-1)),
    ]
