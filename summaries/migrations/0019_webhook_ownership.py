"""Webhook endpoints belong to the user who registered them; secrets rotate with an overlap.

The endpoint's `created_by` becomes its `owner` (renamed: each endpoint keeps the user who
registered it; one without is reached only with the new "manage all webhook endpoints"
permission, which no group is given here). A rotated secret is kept in `previous_secret`
until `previous_secret_expires_at`. Events gain the "ping" type (test events).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0018_working_copy_video_and_schedule"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(
            model_name="webhookendpoint",
            old_name="created_by",
            new_name="owner",
        ),
        migrations.AlterField(
            model_name="webhookendpoint",
            name="owner",
            field=models.ForeignKey(
                blank=True,
                help_text="The user who registered the endpoint and may change it.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="webhook_endpoints",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterModelOptions(
            name="webhookendpoint",
            options={
                "ordering": ["id"],
                "permissions": [
                    ("manage_all_webhookendpoints", "Can manage all webhook endpoints")
                ],
            },
        ),
        migrations.AddField(
            model_name="webhookendpoint",
            name="previous_secret",
            field=models.CharField(blank=True, editable=False, max_length=100),
        ),
        migrations.AddField(
            model_name="webhookendpoint",
            name="previous_secret_expires_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AlterField(
            model_name="webhookevent",
            name="type",
            field=models.CharField(
                choices=[
                    ("summary.published", "A summary went live"),
                    ("summary.updated", "A live summary's changes went live"),
                    ("summary.unpublished", "A live summary was taken down"),
                    ("source.state_changed", "A cited source changed state"),
                    ("citation.verdict_changed", "A citation's claim verdict changed"),
                    ("ping", "A test event (sent on request)"),
                ],
                max_length=40,
            ),
        ),
    ]
