"""Channels, organisations, people, topics and videos as editors write them, from the
admin or the API: who may, the values checked, the save recorded as a revision, and the
pages that show them made stale.

A video whose summary is published is not written here: its changes wait with the
summary's unpublished changes (`save.edit_video`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import reversion
from django.db import models, transaction

from summaries.pagecache.generation import content_changed

from . import gate

Entry = TypeVar("Entry", bound=models.Model)


def _require(user: gate.Actor, action: str, model: type[models.Model]) -> None:
    opts = model._meta
    gate.require(
        user, f"{opts.app_label}.{action}_{opts.model_name}", f"{action} {opts.verbose_name_plural}"
    )


@transaction.atomic
def save_entry(
    *,
    instance: Entry,
    user: gate.Actor,
    values: dict[str, Any] | None = None,
    comment: str = "",
    clean: bool = True,
) -> Entry:
    """Set `values` on `instance` (a new one or one read for update), check its fields and
    save it in a revision by `user`, commented with `comment` when one is given (the admin
    comments its revisions with its change message). Raises PermissionDenied when `user`
    may not add (or change) entries of its kind, ValidationError naming the field. The
    admin passes `clean=False`: its form has checked the fields it shows."""
    _require(user, "change" if instance.pk else "add", type(instance))
    for name, value in (values or {}).items():
        setattr(instance, name, value)
    if clean:  # uniqueness is the database's to enforce, with the lock the caller holds
        instance.full_clean(validate_unique=False, validate_constraints=False)
    with reversion.create_revision():
        instance.save()
        if user is not None and user.is_authenticated:
            reversion.set_user(user)
        if comment:
            reversion.set_comment(comment)
    content_changed()  # names, descriptions and links show on pages
    return instance


@transaction.atomic
def delete_entries(*, entries: Iterable[models.Model], user: gate.Actor) -> None:
    """Delete catalogue entries as `user` (PermissionDenied unless `user` may delete
    each kind); pages that showed them go stale."""
    entries = list(entries)
    for model in {type(entry) for entry in entries}:
        _require(user, "delete", model)
    for entry in entries:
        entry.delete()
    content_changed()
