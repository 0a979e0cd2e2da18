"""The review conversation (ReviewMessage), a summary's assigned reviewer, and reviewers'
small fixes: the Reviewers group may add, change and delete a summary's parts.

Reviewers could change a summary's own fields but only view its parts, so a typo in a
chapter went back to an editor; their edits of a published summary go to its working copy
and into its history like an editor's, so nothing reaches readers unreviewed.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

REVIEWERS = "Reviewers"
PART_MODELS = ("keypoint", "takeaway", "chapter", "caveat")
REVIEWER_FIX_CODENAMES = [
    f"{action}_{model}" for model in PART_MODELS for action in ("add", "change", "delete")
]


def _permissions(apps, codenames):
    app_config = apps.get_app_config("summaries")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    return Permission.objects.filter(content_type__app_label="summaries", codename__in=codenames)


def grant_reviewers_part_changes(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    reviewers = Group.objects.filter(name=REVIEWERS).first()
    if reviewers is not None:
        reviewers.permissions.add(*_permissions(apps, REVIEWER_FIX_CODENAMES))


def revoke_reviewers_part_changes(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    reviewers = Group.objects.filter(name=REVIEWERS).first()
    if reviewers is not None:
        reviewers.permissions.remove(*_permissions(apps, REVIEWER_FIX_CODENAMES))


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0020_notifications"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="summary",
            name="assigned_to",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="summaries_to_review",
                to=settings.AUTH_USER_MODEL,
                verbose_name="reviewer",
            ),
        ),
        migrations.CreateModel(
            name="ReviewMessage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("submitted", "Sent for review"),
                            ("sent_back", "Sent back"),
                            ("reply", "Reply"),
                            ("note", "Note"),
                        ],
                        default="reply",
                        max_length=20,
                    ),
                ),
                ("text", models.TextField(blank=True, max_length=2000)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "author",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "summary",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_messages",
                        to="summaries.summary",
                    ),
                ),
            ],
            options={
                "ordering": ["created_at", "id"],
                "indexes": [
                    models.Index(fields=["summary", "created_at"], name="reviewmessage_thread")
                ],
            },
        ),
        migrations.RunPython(grant_reviewers_part_changes, revoke_reviewers_part_changes),
    ]
