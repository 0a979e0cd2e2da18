"""PostgreSQL notifies the channel `curation_generation` whenever the content generation
row changes (or its table is emptied), at the commit of the change: each web process's
listener (summaries/pagecache/listening.py) then reads the row again, so requests need not.

Nothing on SQLite. Safe while the previous release serves: a trigger that only notifies,
on a channel nothing of that release listens to.
"""

from django.db import migrations

TABLE = "summaries_contentgeneration"
FUNCTION = "curation_generation_notify"

CREATE = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('curation_generation', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER curation_generation_changed
    AFTER INSERT OR UPDATE OR DELETE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}();
CREATE TRIGGER curation_generation_emptied
    AFTER TRUNCATE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}();
"""

DROP = f"""
DROP TRIGGER IF EXISTS curation_generation_emptied ON {TABLE};
DROP TRIGGER IF EXISTS curation_generation_changed ON {TABLE};
DROP FUNCTION IF EXISTS {FUNCTION}();
"""


def create_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("summaries", "0031_search")]

    operations = [migrations.RunPython(create_triggers, drop_triggers, elidable=False)]
