"""Channels, organisations, people, topics and videos: what summaries are about."""

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import FileSystemStorage, storages
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from summaries.text import platforms
from summaries.text.durations import MAX_SECONDS

from .base import (
    LANGUAGE_CHOICES,
    LANGUAGE_CODES,
    SHORT_TEXT,
    TimestampedModel,
    VisibleCharField,
    VisibleTextField,
    live_q,
    slug_url,
)


class Channel(TimestampedModel):
    name = VisibleCharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    description = VisibleTextField(blank=True, max_length=SHORT_TEXT)
    site_url = models.URLField("site URL", blank=True, help_text="The channel's own page.")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return slug_url("summaries:channel-detail", self.slug)


_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def validate_domains(value: str) -> None:
    bad = [d for d in value.lower().split() if not _DOMAIN.match(d)]
    if bad:
        raise ValidationError(
            f"Not a web domain: {', '.join(bad)}. Write bare domains such as anthropic.com, "
            "one per line (no https:// and no path)."
        )


def split_domains(domains: str) -> list[str]:
    """An organisation's `domains` text as a list, lower case."""
    return [d.strip().lower() for d in domains.split() if d.strip()]


class Organisation(TimestampedModel):
    name = VisibleCharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    domains = models.TextField(
        blank=True,
        validators=[validate_domains],
        help_text=(
            "Web domains this organisation publishes on, one per line (e.g. anthropic.com). "
            "A claim such as “Anthropic says” whose link is elsewhere gets a warning."
        ),
    )

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def domain_list(self) -> list[str]:
        return split_domains(self.domains)


class Person(TimestampedModel):
    name = VisibleCharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "people"

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return slug_url("summaries:person-detail", self.slug)


class Topic(TimestampedModel):
    name = VisibleCharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return slug_url("summaries:topic-detail", self.slug)


class VideoQuerySet(models.QuerySet):
    def with_card_data(self):
        """What a video card shows: channel, people with their affiliations."""
        return self.select_related("channel").prefetch_related(
            models.Prefetch(
                "appearances",
                queryset=Appearance.objects.select_related("person", "organisation"),
            ),
        )

    def with_listing_data(self):
        """What a video card shows, and its topics (API lists, related videos' reasons)."""
        return self.with_card_data().prefetch_related("topics")

    def published(self, now=None):
        """Videos whose summary is published and whose publish time has been reached."""
        return self.filter(live_q("summary__", now))


THUMBNAIL_STORAGE = "thumbnails"  # the STORAGES entry thumbnails are kept in
# A stored name that needs no percent-encoding in a URL (content-hash names always are).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_./-]+\Z")


def _storage_url(storage, name: str) -> str:
    """storage.url(name); for a plain name on disk, its base URL joined directly.

    FileSystemStorage.url costs ~30 µs (urljoin), twice per card on every list page;
    a plain name under a base URL ending in "/" joins to the same string.
    """
    if isinstance(storage, FileSystemStorage) and _PLAIN_NAME.match(name):
        return storage.base_url + name
    return storage.url(name)


@dataclass(frozen=True)
class StoredThumbnail:
    """A video's stored thumbnail as a page shows it: the largest variant and all of them."""

    src: str
    srcset: str  # "<url> 320w, <url> 640w"
    width: int  # of the largest variant (the intrinsic size pages reserve room for)
    height: int


class Video(TimestampedModel):
    class Platform(models.TextChoices):
        YOUTUBE = platforms.YOUTUBE, "YouTube"
        OTHER = platforms.OTHER, "Other"

    title = VisibleCharField(max_length=300)
    slug = models.SlugField(max_length=200, unique=True)
    channel = models.ForeignKey(Channel, on_delete=models.PROTECT, related_name="videos")
    source_url = models.URLField("source URL", max_length=500)
    platform = models.CharField(
        max_length=20, choices=Platform.choices, default=Platform.OTHER, editable=False
    )
    platform_video_id = models.CharField(
        "platform video id",
        max_length=64,
        blank=True,
        editable=False,
        help_text="Filled from the source URL (YouTube watch, youtu.be, embed and shorts links).",
    )
    duration_seconds = models.PositiveIntegerField(
        "duration",
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SECONDS)],
        help_text="Length in seconds.",
    )
    language = models.CharField(max_length=10, choices=LANGUAGE_CHOICES, default="en")
    published_on = models.DateField("published", help_text="When the video was published.")
    thumbnail_url = models.URLField(
        "thumbnail URL",
        max_length=500,
        blank=True,
        help_text="Leave empty for the platform's own (YouTube). Fetched and stored by a "
        "worker; readers' browsers never load it from here.",
    )
    # The stored thumbnail (summaries/thumbnails): written by the worker only.
    thumbnail_source = models.URLField(
        max_length=500,
        blank=True,
        editable=False,
        help_text="The address the thumbnail was last fetched from (empty: never).",
    )
    thumbnail_files = models.JSONField(
        default=list,
        blank=True,
        editable=False,
        help_text="The stored WebP variants, smallest first: [storage name, width, height].",
    )
    thumbnail_fetched_at = models.DateTimeField(null=True, blank=True, editable=False)
    thumbnail_error = models.CharField(
        max_length=300,
        blank=True,
        editable=False,
        help_text="Why the last fetch stored nothing (empty when it worked).",
    )
    thumbnail_failures = models.PositiveSmallIntegerField(
        default=0,
        editable=False,
        help_text="Fetches in a row that failed for a while (timeout, 5xx); 0 once one ends.",
    )
    thumbnail_retry_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the periodic sweep may queue this thumbnail's fetch again "
        "(empty: any time it needs one).",
    )
    blurb = VisibleCharField(
        max_length=300, blank=True, help_text="One line for cards such as “More from this channel”."
    )
    people = models.ManyToManyField(Person, through="Appearance", related_name="videos", blank=True)
    topics = models.ManyToManyField(Topic, related_name="videos", blank=True)
    related_refreshed_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the stored related videos were last computed (empty: never).",
    )

    objects = VideoQuerySet.as_manager()

    class Meta:
        ordering = ["-published_on", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(duration_seconds__gt=0), name="video_duration_positive"
            ),
            models.CheckConstraint(
                condition=Q(language__in=LANGUAGE_CODES), name="video_language_valid"
            ),
            models.UniqueConstraint(
                fields=["platform", "platform_video_id"],
                condition=~Q(platform_video_id=""),
                name="video_platform_id_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["channel", "-published_on"], name="video_channel_date"),
            # Lists newest first walk this index and stop after one page.
            models.Index(fields=["-published_on", "-id"], name="video_date_id"),
            models.Index(fields=["related_refreshed_at"], name="video_related_refreshed"),
        ]

    def __str__(self):
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.platform, self.platform_video_id = platforms.parse_video_url(self.source_url)
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return slug_url("summaries:summary-detail", self.slug)

    def clean(self):
        # Filled here too so that full_clean() checks the platform id's uniqueness.
        self.platform, self.platform_video_id = platforms.parse_video_url(self.source_url)

    def url_at(self, seconds: int) -> str:
        return platforms.video_url_at(
            self.source_url, self.platform, self.platform_video_id, seconds
        )

    @cached_property
    def thumbnail(self) -> StoredThumbnail | None:
        """The stored thumbnail's URLs and size, through the storage (None until stored)."""
        if not self.thumbnail_files:
            return None
        storage = storages[THUMBNAIL_STORAGE]
        variants = [
            (_storage_url(storage, name), width, height)
            for name, width, height in self.thumbnail_files
        ]
        src, width, height = variants[-1]
        srcset = ", ".join(f"{url} {w}w" for url, w, _ in variants)
        return StoredThumbnail(src=src, srcset=srcset, width=width, height=height)


class RelatedLink(models.Model):
    """One stored "Related" entry of a video, computed by `related.refresh_related` (one
    video) or `related_bulk.refresh_all_related` (many at once, the same entries).

    Precomputed so that a summary page does not rank the catalogue on every request; pages
    still show only the entries whose video is live when the page is read.
    """

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="related_links")
    related = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    score = models.FloatField()
    reasons = models.JSONField(default=list)

    class Meta:
        ordering = ["video", "position"]
        constraints = [
            models.UniqueConstraint(fields=["video", "position"], name="related_link_position"),
            models.UniqueConstraint(fields=["video", "related"], name="related_link_unique"),
            models.CheckConstraint(
                condition=~Q(video=models.F("related")), name="related_link_not_self"
            ),
        ]

    def __str__(self):
        return f"{self.video_id} → {self.related_id} ({self.score})"


class Appearance(models.Model):
    """A person on a video, with the organisation they stand for on that video."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="appearances")
    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="appearances")
    organisation = models.ForeignKey(
        Organisation,
        on_delete=models.PROTECT,
        related_name="appearances",
        null=True,
        blank=True,
        help_text="Who the person speaks for on this video (may differ between videos).",
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["video", "person"], name="appearance_once_per_video")
        ]

    def __str__(self):
        if self.organisation_id:
            return f"{self.person} · {self.organisation}"
        return str(self.person)


class ListFacets(models.Model):
    """The filter choices of one channel's, person's or topic's list page, stored.

    What a reader can narrow the list by (the topics, people and languages of the owner's
    live videos) and how many live videos it has. Finding them means reading every live
    video of the owner (7 ms of a 15 ms page for the largest generated channel), so they
    are stored and computed again only after a change: `reader.facets` writes them on the
    first read and forgets them (`version` moves on, `choices` emptied) in the same
    transaction as any save that could change them. `valid_until` is the owner's next
    scheduled publication, when the choices change with no save at all.
    """

    class Kind(models.TextChoices):
        CHANNEL = "channel"
        PERSON = "person"
        TOPIC = "topic"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    owner_id = models.BigIntegerField()  # a Channel's, Person's or Topic's id
    version = models.PositiveIntegerField(default=0)
    choices = models.JSONField(null=True, blank=True)  # None: to be computed again
    valid_until = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "owner_id"], name="list_facets_owner"),
        ]

    def __str__(self):
        return f"Filter choices of {self.kind} {self.owner_id} (version {self.version})"
