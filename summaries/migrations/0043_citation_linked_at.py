import django.utils.timezone
from django.db import migrations, models


def fill_linked_at(apps, schema_editor):
    """Existing links: first cited when first checked or confirmed; else, never checked,
    when their summary (or the live summary a working copy edits) first went live; else
    when the summary was made."""
    Citation = apps.get_model("summaries", "Citation")
    CitationEvidence = apps.get_model("summaries", "CitationEvidence")
    cited = dict(
        CitationEvidence.objects.filter(kind="cited").values_list("citation_id", "captured_at")
    )
    rows = Citation.objects.select_related("summary", "summary__working_copy_of").only(
        "id",
        "confirmed_at",
        "summary__created_at",
        "summary__first_published_at",
        "summary__working_copy_of__first_published_at",
    )
    batch = []
    for row in rows.iterator(chunk_size=2000):
        row.linked_at = _linked_at(row, cited.get(row.pk))
        batch.append(row)
        if len(batch) == 2000:
            Citation.objects.bulk_update(batch, ["linked_at"])
            batch = []
    Citation.objects.bulk_update(batch, ["linked_at"])


def _linked_at(row, cited_at):
    checked = [moment for moment in (row.confirmed_at, cited_at) if moment is not None]
    if checked:
        return min(checked)
    summary = row.summary
    live = summary.working_copy_of or summary
    return live.first_published_at or summary.created_at


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0042_corrections_without_line_break_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="citation",
            name="linked_at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        migrations.RunPython(fill_linked_at, migrations.RunPython.noop, elidable=True),
    ]
