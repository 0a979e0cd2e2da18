"""Cache invalidation: any change to published content makes cached pages stale."""

from django.db.models.signals import m2m_changed, post_delete, post_save

from . import models
from .pagecache.generation import content_changed as mark_pages_stale

CONTENT_MODELS = [
    models.Channel,
    models.Organisation,
    models.Person,
    models.Topic,
    models.Video,
    models.Appearance,
    models.Summary,
    models.KeyPoint,
    models.Takeaway,
    models.Chapter,
    models.Caveat,
    models.Source,
    models.Citation,
]


def content_changed(sender, **kwargs):
    mark_pages_stale()


def connect() -> None:
    for model in CONTENT_MODELS:
        post_save.connect(content_changed, sender=model, dispatch_uid=f"cache-{model.__name__}")
        post_delete.connect(content_changed, sender=model, dispatch_uid=f"cache-d-{model.__name__}")
    m2m_changed.connect(
        content_changed, sender=models.Video.topics.through, dispatch_uid="cache-video-topics"
    )
