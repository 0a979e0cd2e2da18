"""The stored search text has the typographic apostrophe ’ where it had the modifier letter ʼ,
as the writes now store it (summaries.text.apostrophes.searchable): PostgreSQL's parser
reads ʼ as a letter, so "Anthropicʼs" could not be found as "Anthropic's".

Only the rows holding a ʼ are written (on PostgreSQL their generated vectors follow); one
character for another, so line N of a transcript's search text stays segment N. Safe while
the previous release serves: one character for another that looks the same, in text only
search and its snippets read; a search text that release writes with ʼ keeps it until the
next save.
"""

from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Replace

MODIFIER_LETTER = "ʼ"
TYPOGRAPHIC = "’"
SEARCH_TEXTS = [("Summary", "search_document"), ("Transcript", "search_text")]


def modifier_letters_as_typographic(apps, schema_editor):
    for model_name, field in SEARCH_TEXTS:
        model = apps.get_model("summaries", model_name)
        model.objects.filter(**{f"{field}__contains": MODIFIER_LETTER}).update(
            **{field: Replace(F(field), Value(MODIFIER_LETTER), Value(TYPOGRAPHIC))}
        )


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0030_corrections"),
    ]

    operations = [
        migrations.RunPython(
            modifier_letters_as_typographic, migrations.RunPython.noop, elidable=True
        ),
    ]
