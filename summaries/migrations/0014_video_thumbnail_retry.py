from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0013_summary_page"),
    ]

    operations = [
        migrations.AddField(
            model_name="video",
            name="thumbnail_failures",
            field=models.PositiveSmallIntegerField(
                default=0,
                editable=False,
                help_text=(
                    "Fetches in a row that failed for a while (timeout, 5xx); 0 once one ends."
                ),
            ),
        ),
        migrations.AddField(
            model_name="video",
            name="thumbnail_retry_at",
            field=models.DateTimeField(
                blank=True,
                editable=False,
                help_text="When the periodic sweep may queue this thumbnail's fetch again "
                "(empty: any time it needs one).",
                null=True,
            ),
        ),
    ]
