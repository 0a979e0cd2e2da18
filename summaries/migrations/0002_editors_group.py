"""Create the "Editors" group with what editors need to write, revise and publish summaries."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

EDITORS = "Editors"

# model -> actions. Editors may delete a summary's parts (inlines) but not whole summaries,
# videos or channels; sources and citations are maintained by the system.
PERMISSIONS = {
    "summary": ["add", "change", "view", "publish"],
    "keypoint": ["add", "change", "delete", "view"],
    "takeaway": ["add", "change", "delete", "view"],
    "chapter": ["add", "change", "delete", "view"],
    "caveat": ["add", "change", "delete", "view"],
    "video": ["add", "change", "view"],
    "appearance": ["add", "change", "delete", "view"],
    "channel": ["add", "change", "view"],
    "organisation": ["add", "change", "view"],
    "person": ["add", "change", "view"],
    "topic": ["add", "change", "view"],
    "citation": ["view"],
    "source": ["view"],
}


def codenames():
    for model, actions in PERMISSIONS.items():
        for action in actions:
            yield "publish_summary" if action == "publish" else f"{action}_{model}"


def create_editors_group(apps, schema_editor):
    # Permissions are normally created after all migrations ran; make sure they exist now.
    app_config = apps.get_app_config("summaries")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=EDITORS)
    wanted = list(codenames())
    permissions = Permission.objects.filter(
        content_type__app_label="summaries", codename__in=wanted
    )
    missing = set(wanted) - set(permissions.values_list("codename", flat=True))
    if missing:
        raise RuntimeError(f"Permissions not found: {sorted(missing)}")
    group.permissions.add(*permissions)


def remove_editors_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=EDITORS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_editors_group, remove_editors_group)]
