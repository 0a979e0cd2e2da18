import datetime
import importlib

import factory
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from summaries import models

EDITORS_MIGRATION = importlib.import_module("summaries.migrations.0002_editors_group")
EDITORS = EDITORS_MIGRATION.EDITORS
create_editors_group = EDITORS_MIGRATION.create_editors_group
REVIEWERS_MIGRATION = importlib.import_module("summaries.migrations.0010_reviewers_group")
REVIEWER_FIXES_MIGRATION = importlib.import_module("summaries.migrations.0021_review_conversation")
FOLLOWERS_MIGRATION = importlib.import_module("summaries.migrations.0029_subscriptions")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")


def reviewers_group() -> Group:
    """The Reviewers group as its data migration makes it (see editors_group)."""
    group = Group.objects.filter(name=REVIEWERS_MIGRATION.REVIEWERS).first()
    if group is None or not group.permissions.exists():
        config = django_apps.get_app_config("summaries")
        models_module = config.models_module  # the migration's function resets it
        try:
            REVIEWERS_MIGRATION.create_reviewers_group(django_apps, None)
            REVIEWER_FIXES_MIGRATION.grant_reviewers_part_changes(django_apps, None)
        finally:
            config.models_module = models_module
        group = Group.objects.get(name=REVIEWERS_MIGRATION.REVIEWERS)
    return group


def editors_group() -> Group:
    """The Editors group as its data migration makes it.

    Tests on a transactional database empty every table afterwards, the group included (or
    leave it without its permissions); tests that run later make it again the same way.
    """
    group = Group.objects.filter(name=EDITORS).first()
    if group is None or not group.permissions.exists():
        config = django_apps.get_app_config("summaries")
        models_module = config.models_module  # the migration's function resets it
        try:
            create_editors_group(django_apps, None)
            # …as the later migration leaves it: publishing belongs to reviewers.
            REVIEWERS_MIGRATION.create_reviewers_group(django_apps, None)
            REVIEWER_FIXES_MIGRATION.grant_reviewers_part_changes(django_apps, None)
            FOLLOWERS_MIGRATION.grant_editors_follower_counts(django_apps, None)
        finally:
            config.models_module = models_module
        group = Group.objects.get(name=EDITORS)
    return group


class EditorFactory(UserFactory):
    """An editor: writes summaries and sends them to review, but does not publish."""

    is_staff = True

    @factory.post_generation
    def editors_group(self, create, extracted, **kwargs):
        if create:
            self.groups.add(editors_group())
            self.save()


class ReviewerFactory(EditorFactory):
    """An editor who is also a reviewer: publishes, schedules, unpublishes, sends back."""

    @factory.post_generation
    def reviewers_group(self, create, extracted, **kwargs):
        if create:
            self.groups.add(reviewers_group())
            self.save()


class ChannelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Channel

    name = factory.Sequence(lambda n: f"Channel {n}")
    slug = factory.Sequence(lambda n: f"channel-{n}")


class OrganisationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Organisation

    name = factory.Sequence(lambda n: f"Organisation {n}")
    slug = factory.Sequence(lambda n: f"organisation-{n}")


class PersonFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Person

    name = factory.Sequence(lambda n: f"Person {n}")
    slug = factory.Sequence(lambda n: f"person-{n}")


class TopicFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Topic

    name = factory.Sequence(lambda n: f"Topic {n}")
    slug = factory.Sequence(lambda n: f"topic-{n}")


class VideoFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Video

    title = factory.Sequence(lambda n: f"Video {n}")
    slug = factory.Sequence(lambda n: f"video-{n}")
    channel = factory.SubFactory(ChannelFactory)
    source_url = factory.Sequence(lambda n: f"https://www.youtube.com/watch?v=vid{n:08d}")
    duration_seconds = 600
    language = "en"
    published_on = datetime.date(2026, 10, 1)


class AppearanceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Appearance

    video = factory.SubFactory(VideoFactory)
    person = factory.SubFactory(PersonFactory)


class SummaryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Summary

    video = factory.SubFactory(VideoFactory)
    tldr = "What the video says, in thirty seconds."

    class Params:
        live = factory.Trait(
            status=models.Summary.Status.PUBLISHED,
            publish_at=factory.LazyFunction(lambda: timezone.now() - datetime.timedelta(hours=1)),
        )


class KeyPointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.KeyPoint

    summary = factory.SubFactory(SummaryFactory)
    position = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Point {n}")
    body = "A point worth making."


class TakeawayFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Takeaway

    summary = factory.SubFactory(SummaryFactory)
    position = factory.Sequence(lambda n: n + 1)
    text = "Something to remember."


class ChapterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Chapter

    summary = factory.SubFactory(SummaryFactory)
    position = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Chapter {n}")
    body = "Some *edited* transcript."


def publish_edit(summary, *, parts=None, **fields):
    """Change a live summary the one way there is: on its working copy, which the system
    then publishes at once. `parts` maps a part model to a function that takes the copy's
    parts of that kind and returns them changed."""
    from summaries.editing import copies, save

    copy, _ids, _made = copies.edit_target(summary=summary, user=None)
    for name, value in fields.items():
        setattr(copy, name, value)
    changed = {}
    for model, change in (parts or {}).items():
        changed[model] = change(list(model.objects.filter(summary=copy).order_by("position")))
    save.save_summary(summary=copy, parts=changed, user=None)
    copies.publish_changes(summary=summary, user=None)
    summary.refresh_from_db()
    return summary
