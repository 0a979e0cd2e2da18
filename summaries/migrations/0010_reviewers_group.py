"""Review: publishing becomes the Reviewers' permission, no longer every editor's.

Editors write and submit for review; reviewers (the "Reviewers" group) publish, schedule,
unpublish and send work back with a comment. A user may be in both groups.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

EDITORS = "Editors"
REVIEWERS = "Reviewers"
PUBLISH = "publish_summary"
# What a reviewer needs besides publishing: to open and read what they review.
REVIEWER_CODENAMES = [
    PUBLISH,
    "view_summary",
    "change_summary",
    "view_keypoint",
    "view_takeaway",
    "view_chapter",
    "view_caveat",
    "view_video",
    "view_channel",
    "view_person",
    "view_topic",
    "view_organisation",
    "view_appearance",
    "view_citation",
    "view_source",
]


def _permissions(apps, codenames):
    app_config = apps.get_app_config("summaries")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    return Permission.objects.filter(content_type__app_label="summaries", codename__in=codenames)


def create_reviewers_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    reviewers, _ = Group.objects.get_or_create(name=REVIEWERS)
    reviewers.permissions.add(*_permissions(apps, REVIEWER_CODENAMES))
    editors = Group.objects.filter(name=EDITORS).first()
    if editors is not None:
        editors.permissions.remove(*_permissions(apps, [PUBLISH]))


def remove_reviewers_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    editors = Group.objects.filter(name=EDITORS).first()
    if editors is not None:
        editors.permissions.add(*_permissions(apps, [PUBLISH]))
    Group.objects.filter(name=REVIEWERS).delete()


class Migration(migrations.Migration):
    dependencies = [("summaries", "0009_working_copies_and_review")]

    operations = [migrations.RunPython(create_reviewers_group, remove_reviewers_group)]
