"""Corrections recorded before texts were stored normalised may list, in what readers
are shown as changed, a field whose only difference was a browser's CRLF line breaks or
whitespace after its last word. Those items are taken out; nothing else is touched, and
an item with any other difference is kept as it is."""

from django.db import migrations

from summaries.text.line_endings import normalised_text


def _side(runs) -> str:
    return normalised_text("".join(text for text, _changed in runs or []))


def is_no_change(item) -> bool:
    """An item of Correction.changes whose two sides say the same, normalised."""
    return bool(item.get("old")) and _side(item.get("old")) == _side(item.get("new"))


def drop_items_that_changed_nothing(apps, schema_editor):
    Correction = apps.get_model("summaries", "Correction")
    for pk, changes in Correction.objects.values_list("pk", "changes").iterator():
        kept = [item for item in changes or [] if not is_no_change(item)]
        if len(kept) != len(changes or []):
            Correction.objects.filter(pk=pk).update(changes=kept)


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0041_archivedcopy_matched_by"),
    ]

    operations = [
        migrations.RunPython(drop_items_that_changed_nothing, migrations.RunPython.noop),
    ]
