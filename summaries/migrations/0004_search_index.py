"""GIN index for full-text search on PostgreSQL (other databases have nothing to create).

Superseded by 0005_summary_search_vector, which drops this index: search now reads a
stored tsvector column (see that migration for why).
"""

from django.db import migrations

INDEX_NAME = "summary_search_document_gin"

CREATE_SQL = (
    f"CREATE INDEX IF NOT EXISTS {INDEX_NAME} ON summaries_summary "
    "USING gin (to_tsvector('english'::regconfig, COALESCE(search_document, '')))"
)
DROP_SQL = f"DROP INDEX IF EXISTS {INDEX_NAME}"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_SQL)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_SQL)


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0003_summary_search_document"),
    ]

    operations = [
        migrations.RunPython(create_index, drop_index, elidable=False),
    ]
