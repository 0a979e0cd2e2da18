import django.db.models.deletion
from django.db import migrations, models

# What each revision did was read from the start of its comment until this migration; the
# rules as they were then, longest start first ("Sent back" before "Sent").
STARTS = {
    "Published": "published",
    "Scheduled": "scheduled",
    "Unpublished": "unpublished",
    "Sent for review": "submitted",
    "Sent back": "sent_back",
    "Restored": "restored",
    "Reverted": "restored",
    "Discarded changes": "discarded",
    "Pinned": "pinned",
    "Removed the pin": "unpinned",
    "Approved the paraphrase": "approved",
    "Overrode the refused pin": "overrode",
    "Accepted the proposed": "pinned",
    "Kept the pinned": "kept_pin",
}
BATCH = 2000


def kind_of(comment: str) -> str | None:
    comment = comment.strip()
    for start in sorted(STARTS, key=len, reverse=True):
        if comment.startswith(start):
            return STARTS[start]
    return None


def fill_actions(apps, schema_editor):
    """Every existing revision whose comment says it did more than save gets its action."""
    Revision = apps.get_model("reversion", "Revision")
    RevisionAction = apps.get_model("summaries", "RevisionAction")
    rows = []
    for pk, comment in Revision.objects.values_list("pk", "comment").iterator(BATCH):
        kind = kind_of(comment)
        if kind is not None:
            rows.append(RevisionAction(revision_id=pk, kind=kind))
        if len(rows) >= BATCH:
            RevisionAction.objects.bulk_create(rows)
            rows = []
    RevisionAction.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [
        ("reversion", "0002_add_index_on_version_for_content_type_and_db"),
        ("summaries", "0043_citation_linked_at"),
    ]

    operations = [
        migrations.CreateModel(
            name="RevisionAction",
            fields=[
                (
                    "revision",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="action",
                        serialize=False,
                        to="reversion.revision",
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("published", "Published"),
                            ("scheduled", "Scheduled"),
                            ("unpublished", "Unpublished"),
                            ("submitted", "Submitted for review"),
                            ("sent_back", "Sent back"),
                            ("restored", "Restored"),
                            ("discarded", "Discarded changes"),
                            ("pinned", "Pinned"),
                            ("unpinned", "Unpinned"),
                            ("approved", "Approved"),
                            ("overrode", "Overrode"),
                            ("kept_pin", "Kept the pin"),
                        ],
                        max_length=20,
                    ),
                ),
            ],
            options={"base_manager_name": "objects"},
        ),
        migrations.RunPython(fill_actions, migrations.RunPython.noop, elidable=True),
    ]
