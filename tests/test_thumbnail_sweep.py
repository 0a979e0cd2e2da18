"""Thumbnails after the first fetch: the periodic sweep that tries failed fetches again
(with a growing wait, in bounded batches, queued once), and the deletion of stored files
no video shows any more (after the commit, never a file another video still shows).

Fetches go to a real loopback server (tests.test_checking.site); files to a temporary folder.
"""

import datetime
import logging

import pytest
import reversion
import time_machine
from django.core.files.storage import storages
from reversion.models import Version

from curation.celery import app
from summaries import tasks, thumbnails
from summaries.models import Video
from summaries.thumbnails import store
from tests.factories import VideoFactory
from tests.test_checking import site, url  # noqa: F401 - fixtures
from tests.test_linkcheck_fetch import send
from tests.test_thumbnails import (  # noqa: F401 - thumbnail_settings is an autouse fixture
    FAST,
    image_route,
    picture,
    queued_thumbnails,
    thumbnail_settings,
    video_with_thumbnail,
)

pytestmark = pytest.mark.django_db

START = datetime.datetime(2026, 11, 2, 9, 0, tzinfo=datetime.UTC)


def at(**delta):
    return time_machine.travel(START + datetime.timedelta(**delta), tick=False)


def sweep(capture, limit=100) -> list[tuple]:
    """What one sweep queues (the fetch tasks' arguments)."""
    with capture() as callbacks:
        thumbnails.sweep_thumbnails(limit=limit)
    return queued_thumbnails(callbacks)


def failing_video(site, path="/down.jpg"):  # noqa: F811
    """A video whose thumbnail server answers 503, after its first (failed) fetch."""
    site.routes[path] = lambda handler: send(handler, 503, b"busy")
    video = VideoFactory(thumbnail_url=url(site, path))
    with pytest.raises(thumbnails.TransientFetchError):
        thumbnails.fetch_thumbnail(video=video, **FAST)
    video.refresh_from_db()
    return video


def exists(name: str) -> bool:
    return storages["thumbnails"].exists(name)


def names(video: Video) -> list[str]:
    return [name for name, _, _ in video.thumbnail_files]


# --- The sweep --------------------------------------------------------------------------


def test_a_transient_failure_is_queued_again_after_a_wait_that_grows(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    with at():
        video = failing_video(site)
    assert video.thumbnail_error == "HTTP 503" and video.thumbnail_failures == 1
    first_wait = video.thumbnail_retry_at - START
    assert first_wait > datetime.timedelta(0)

    with at(seconds=first_wait.total_seconds() - 1):
        assert sweep(django_capture_on_commit_callbacks) == []  # tried too recently
    with at(seconds=first_wait.total_seconds()):
        assert sweep(django_capture_on_commit_callbacks) == [(video.pk,)]
        with pytest.raises(thumbnails.TransientFetchError):
            thumbnails.fetch_thumbnail(video=Video.objects.get(pk=video.pk), **FAST)

    video.refresh_from_db()
    assert video.thumbnail_failures == 2
    second_wait = video.thumbnail_retry_at - (START + first_wait)
    assert second_wait > first_wait
    # However often it fails, it is tried at least once a day, at most as often as that.
    Video.objects.filter(pk=video.pk).update(thumbnail_failures=50)
    with at(), pytest.raises(thumbnails.TransientFetchError):
        thumbnails.fetch_thumbnail(video=Video.objects.get(pk=video.pk), **FAST)
    assert Video.objects.get(pk=video.pk).thumbnail_retry_at == START + store.RETRY_MAX


def test_permanent_failures_stored_ones_and_those_without_an_address_are_not_swept(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    missing = VideoFactory(thumbnail_url=url(site, "/missing.jpg"))  # 404
    thumbnails.fetch_thumbnail(video=missing, **FAST)
    site.routes["/text"] = image_route(b"<html>hi</html>", "text/html")
    not_an_image = VideoFactory(thumbnail_url=url(site, "/text"))
    thumbnails.fetch_thumbnail(video=not_an_image, **FAST)
    stored = video_with_thumbnail(site)
    thumbnails.fetch_thumbnail(video=stored, **FAST)
    VideoFactory(source_url="https://example.com/talk.mp4", thumbnail_url="")
    never = VideoFactory(source_url="https://youtu.be/dQw4w9WgXcQ", thumbnail_url="")

    assert missing.thumbnail_error and not_an_image.thumbnail_error
    assert sweep(django_capture_on_commit_callbacks) == [(never.pk,)]


def test_the_sweep_selects_exactly_the_videos_that_need_a_fetch(site):  # noqa: F811
    site.routes["/a.jpg"] = image_route(picture())
    videos = [
        VideoFactory(),  # YouTube, never fetched
        VideoFactory(thumbnail_url=url(site, "/a.jpg")),
        VideoFactory(source_url="https://example.com/x.mp4", thumbnail_url=""),
        VideoFactory(source_url="https://example.com/y.mp4", thumbnail_url=url(site, "/a.jpg")),
    ]
    thumbnails.fetch_thumbnail(video=videos[1], **FAST)
    thumbnails.fetch_thumbnail(video=videos[3], **FAST)
    # An address changed after the fetch, one cleared, one YouTube video's own stored.
    Video.objects.filter(pk=videos[1].pk).update(thumbnail_url=url(site, "/b.jpg"))
    Video.objects.filter(pk=videos[3].pk).update(thumbnail_url="")
    youtube = VideoFactory(thumbnail_url="")
    Video.objects.filter(pk=youtube.pk).update(thumbnail_source=thumbnails.wanted_source(youtube))

    wanted = {v.pk for v in Video.objects.all() if thumbnails.needs_fetch(v)}
    assert wanted == {videos[0].pk, videos[1].pk, videos[3].pk}
    assert set(thumbnails.videos_needing_fetch().values_list("pk", flat=True)) == wanted


def test_a_sweep_is_bounded_and_takes_the_never_tried_and_longest_waiting_first(
    django_capture_on_commit_callbacks,
):
    with at():
        videos = [VideoFactory() for _ in range(5)]
        Video.objects.filter(pk=videos[0].pk).update(
            thumbnail_failures=1, thumbnail_retry_at=START - datetime.timedelta(hours=1)
        )
        first = sweep(django_capture_on_commit_callbacks, limit=2)
        second = sweep(django_capture_on_commit_callbacks, limit=2)
        third = sweep(django_capture_on_commit_callbacks, limit=2)
    never_tried = [(v.pk,) for v in videos[1:]]
    assert first == never_tried[:2]
    assert second == never_tried[2:]
    assert third == [(videos[0].pk,)]


def test_running_the_sweep_twice_queues_each_video_once(django_capture_on_commit_callbacks):
    video = VideoFactory()
    with at():
        assert sweep(django_capture_on_commit_callbacks) == [(video.pk,)]
        assert sweep(django_capture_on_commit_callbacks) == []
    # The queued fetch was lost (a worker killed, the broker down): queued again later.
    with at(seconds=store.CLAIM.total_seconds()):
        assert sweep(django_capture_on_commit_callbacks) == [(video.pk,)]


def test_a_video_queued_by_its_save_is_not_queued_again_by_the_sweep(
    django_capture_on_commit_callbacks,
):
    with at():
        video = VideoFactory()
        with django_capture_on_commit_callbacks() as callbacks:
            assert thumbnails.queue_thumbnail(video=video)
        assert queued_thumbnails(callbacks) == [(video.pk,)]
        assert sweep(django_capture_on_commit_callbacks) == []


def test_a_stored_thumbnail_ends_the_waiting(site, django_capture_on_commit_callbacks):  # noqa: F811
    with at():
        video = failing_video(site)
    site.routes["/down.jpg"] = image_route(picture())
    with at(days=2):
        assert sweep(django_capture_on_commit_callbacks) == [(video.pk,)]
        tasks.fetch_thumbnail(video.pk)  # what the worker runs
    video.refresh_from_db()
    assert video.thumbnail is not None
    assert video.thumbnail_failures == 0 and video.thumbnail_retry_at is None
    assert sweep(django_capture_on_commit_callbacks) == []


def test_beat_runs_the_sweep_task_with_the_batch_size(settings, django_capture_on_commit_callbacks):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-thumbnails"]
    assert entry["task"] == tasks.sweep_thumbnails.name in app.tasks
    VideoFactory.create_batch(2)
    settings.THUMBNAIL_SWEEP_BATCH = 1
    with django_capture_on_commit_callbacks() as callbacks:
        tasks.sweep_thumbnails()
    assert len(queued_thumbnails(callbacks)) == 1


# --- Old files ------------------------------------------------------------------------


def test_a_replaced_thumbnail_s_old_files_are_deleted_after_the_commit(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    video = video_with_thumbnail(site, "/a.jpg")
    thumbnails.fetch_thumbnail(video=video, **FAST)
    old = names(video)
    site.routes["/b.png"] = image_route(picture(fmt="PNG", color=(0, 90, 200)), "image/png")
    Video.objects.filter(pk=video.pk).update(thumbnail_url=url(site, "/b.png"))
    video.refresh_from_db()

    with django_capture_on_commit_callbacks(execute=True):
        assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.STORED
        assert all(exists(name) for name in old)  # not before the new record is committed

    new = names(Video.objects.get(pk=video.pk))
    assert new and set(new).isdisjoint(old)
    assert all(exists(name) for name in new)
    assert not any(exists(name) for name in old)


def test_files_another_video_still_shows_are_kept(site, django_capture_on_commit_callbacks):  # noqa: F811
    same = picture()
    one = video_with_thumbnail(site, "/one.jpg", same)
    two = video_with_thumbnail(site, "/two.jpg", same)
    thumbnails.fetch_thumbnail(video=one, **FAST)
    thumbnails.fetch_thumbnail(video=two, **FAST)
    shared = names(one)
    assert shared == names(two)
    site.routes["/new.jpg"] = image_route(picture(color=(10, 200, 10)))

    for video in (one, two):
        Video.objects.filter(pk=video.pk).update(thumbnail_url=url(site, "/new.jpg"))
        video.refresh_from_db()
        with django_capture_on_commit_callbacks(execute=True):
            thumbnails.fetch_thumbnail(video=video, **FAST)
        if video is one:  # two still shows them
            assert all(exists(name) for name in shared)
    assert not any(exists(name) for name in shared)  # nobody shows them any more
    assert all(exists(name) for name in names(two))


def test_a_permanent_failure_or_no_address_deletes_the_files_no_longer_shown(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    failed = video_with_thumbnail(site, "/a.jpg", picture(color=(1, 2, 3)))
    cleared = video_with_thumbnail(
        site, "/b.jpg", picture(color=(4, 5, 6)), source_url="https://example.com/c.mp4"
    )
    for video in (failed, cleared):
        thumbnails.fetch_thumbnail(video=video, **FAST)
    old = names(failed) + names(cleared)
    Video.objects.filter(pk=failed.pk).update(thumbnail_url=url(site, "/gone.jpg"))
    Video.objects.filter(pk=cleared.pk).update(thumbnail_url="")

    with django_capture_on_commit_callbacks(execute=True):
        assert thumbnails.fetch_thumbnail(video=Video.objects.get(pk=failed.pk), **FAST) == (
            thumbnails.FAILED
        )
        assert thumbnails.fetch_thumbnail(video=Video.objects.get(pk=cleared.pk)) == (
            thumbnails.CLEARED
        )
    assert old and not any(exists(name) for name in old)


def test_deleting_a_video_deletes_its_files_but_not_shared_ones(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    same = picture()
    one = video_with_thumbnail(site, "/one.jpg", same)
    two = video_with_thumbnail(site, "/two.jpg", same)
    own = video_with_thumbnail(site, "/own.jpg", picture(color=(9, 9, 200)))
    for video in (one, two, own):
        thumbnails.fetch_thumbnail(video=video, **FAST)

    with django_capture_on_commit_callbacks(execute=True):
        own.delete()
        assert all(exists(name) for name in names(own))  # not before the commit
        one.delete()
    assert not any(exists(name) for name in names(own))
    assert all(exists(name) for name in names(two))  # two still shows them

    with django_capture_on_commit_callbacks(execute=True):
        Video.objects.filter(pk=two.pk).delete()  # bulk deletes (the admin's action) too
    assert not any(exists(name) for name in names(two))


def test_a_storage_error_on_delete_is_logged_not_raised(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
    monkeypatch,
    caplog,
):
    video = video_with_thumbnail(site)
    thumbnails.fetch_thumbnail(video=video, **FAST)
    storage = storages["thumbnails"]

    def broken(name):
        raise OSError("the bucket is read-only")

    monkeypatch.setattr(storage, "delete", broken)
    with caplog.at_level(logging.WARNING), django_capture_on_commit_callbacks(execute=True):
        video.delete()
    assert "the bucket is read-only" in caplog.text
    assert all(exists(name) for name in names(video))


def test_a_video_recovered_from_its_history_after_its_files_went_is_fetched_again(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    video = video_with_thumbnail(site)
    thumbnails.fetch_thumbnail(video=video, **FAST)
    video.refresh_from_db()
    with reversion.create_revision():
        video.save()
    gone, pk = names(video), video.pk
    with django_capture_on_commit_callbacks(execute=True):
        video.delete()
    assert not any(exists(name) for name in gone)

    with django_capture_on_commit_callbacks() as callbacks:
        Version.objects.get_deleted(Video).get().revert()  # the admin's "recover"
    restored = Video.objects.get(pk=pk)
    assert restored.thumbnail is None and thumbnails.needs_fetch(restored)
    assert queued_thumbnails(callbacks) == [(pk,)]
    tasks.fetch_thumbnail(pk)
    assert all(exists(name) for name in names(Video.objects.get(pk=pk)))
