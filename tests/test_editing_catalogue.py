"""editing.catalogue: channels, people, topics, organisations and videos are written by
one service, from the admin and the API alike: who may, the values checked, a revision,
and cached pages made stale."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError
from reversion.models import Version

from summaries.editing import catalogue
from summaries.models import Channel, Topic
from summaries.pagecache.generation import current_generation

from .factories import ChannelFactory, EditorFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_an_editor_creates_a_channel_in_a_revision_and_pages_go_stale(
    django_capture_on_commit_callbacks,
):
    editor = EditorFactory(username="eve")
    before = current_generation()

    with django_capture_on_commit_callbacks(execute=True):
        channel = catalogue.save_entry(
            instance=Channel(),
            values={"name": "Speed Lab", "slug": "speed-lab"},
            user=editor,
            comment="Created through the API.",
        )

    revision = Version.objects.get_for_object(channel).get().revision
    assert (revision.user, revision.get_comment()) == (editor, "Created through the API.")
    assert current_generation() != before


@pytest.mark.parametrize("existing", [False, True], ids=["add", "change"])
def test_a_user_without_the_permission_writes_nothing(existing):
    reader = UserFactory(is_staff=True)
    channel = ChannelFactory(name="Speed Lab") if existing else Channel(slug="new")

    with pytest.raises(PermissionDenied):
        catalogue.save_entry(instance=channel, values={"name": "Renamed"}, user=reader)

    assert not Channel.objects.filter(name="Renamed").exists()
    assert not Version.objects.exists()


def test_a_value_out_of_bounds_names_its_field_and_saves_nothing():
    channel = ChannelFactory(name="Speed Lab")

    with pytest.raises(ValidationError) as refused:
        catalogue.save_entry(instance=channel, values={"name": "x" * 1000}, user=EditorFactory())

    assert "name" in refused.value.message_dict
    assert Channel.objects.get(pk=channel.pk).name == "Speed Lab"


def test_deleting_needs_the_delete_permission_of_each_kind(django_capture_on_commit_callbacks):
    channel, topic = ChannelFactory(), TopicFactory()
    user = UserFactory(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="delete_channel"))

    with pytest.raises(PermissionDenied):
        catalogue.delete_entries(entries=[channel, topic], user=user)
    assert Channel.objects.filter(pk=channel.pk).exists()  # nothing deleted

    before = current_generation()
    with django_capture_on_commit_callbacks(execute=True):
        catalogue.delete_entries(entries=Channel.objects.filter(pk=channel.pk), user=user)
    assert not Channel.objects.filter(pk=channel.pk).exists()
    assert Topic.objects.filter(pk=topic.pk).exists()
    assert current_generation() != before
