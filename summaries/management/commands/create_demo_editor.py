"""Create (or keep) the demo editor account that `make run` prints a login for."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

USERNAME = "editor"
# The demo editor also reviews: one login can write, publish and send back.
GROUPS = ("Editors", "Reviewers")


class Command(BaseCommand):
    help = (
        "Create the staff user 'editor' in the Editors and Reviewers groups. Its random "
        "password is made once, kept in var/editor-password and reused on later runs."
    )

    def handle(self, *args, **options):
        password_file = settings.VAR_DIR / "editor-password"
        if password_file.is_file() and password_file.read_text().strip():
            password = password_file.read_text().strip()
        else:
            password = secrets.token_urlsafe(12)
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.write_text(password + "\n")
            password_file.chmod(0o600)

        with transaction.atomic():
            # The data migrations create the groups with their permissions; this only covers
            # a database where they have not run yet (they then add the permissions).
            groups = [Group.objects.get_or_create(name=name)[0] for name in GROUPS]
            user, created = get_user_model().objects.get_or_create(
                username=USERNAME, defaults={"is_staff": True, "is_active": True}
            )
            changed = created
            if not (user.is_staff and user.is_active):
                user.is_staff = user.is_active = True
                changed = True
            if not user.check_password(password):
                user.set_password(password)
                changed = True
            if changed:
                user.save()
            user.groups.add(*groups)

        self.stdout.write(f"Editor login: {USERNAME} / {password}")
