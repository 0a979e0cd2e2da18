from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0017_list_facets"),
    ]

    operations = [
        migrations.AddField(
            model_name="summary",
            name="video_changes",
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
        migrations.AddField(
            model_name="summary",
            name="scheduled_version",
            field=models.PositiveIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="summary",
            name="part_origins",
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
    ]
