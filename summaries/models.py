"""The content model: channels, people, videos and their curated summaries with cited sources."""

import re

import reversion
from django.conf import global_settings, settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.signals import pre_save
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from .text import platforms
from .text.markdown import MAX_SOURCE_CHARS, render_inline_markdown, render_markdown
from .text.visible import INVISIBLE_MESSAGE, has_visible_character, strip_invisible_edges

# Caps for editor-written text (forms and API); chapters may hold a long transcript.
SHORT_TEXT = 4000
# Times and durations are stored in seconds; nothing we summarise runs longer than this.
MAX_SECONDS = 7 * 24 * 3600

LANGUAGE_CHOICES = list(global_settings.LANGUAGES)
LANGUAGE_CODES = [code for code, _ in LANGUAGE_CHOICES]


class VisibleTextMixin:
    """Text readers see as typed: invisible characters at the edges are dropped, and text
    with no visible character is refused (by full_clean, so in admin forms and the API)."""

    def clean(self, value, model_instance):
        if isinstance(value, str) and value:
            value = strip_invisible_edges(value)
            if not has_visible_character(value) and (value or not self.blank):
                raise ValidationError(INVISIBLE_MESSAGE, code="invisible")
        return super().clean(value, model_instance)


class VisibleCharField(VisibleTextMixin, models.CharField):
    pass


class VisibleTextField(VisibleTextMixin, models.TextField):
    pass


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


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
        return reverse("summaries:channel-detail", kwargs={"slug": self.slug})


_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def validate_domains(value: str) -> None:
    bad = [d for d in value.lower().split() if not _DOMAIN.match(d)]
    if bad:
        raise ValidationError(
            f"Not a web domain: {', '.join(bad)}. Write bare domains such as anthropic.com, "
            "one per line (no https:// and no path)."
        )


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
        return [d.strip().lower() for d in self.domains.split() if d.strip()]


class Person(TimestampedModel):
    name = VisibleCharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "people"

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("summaries:person-detail", kwargs={"slug": self.slug})


class Topic(TimestampedModel):
    name = VisibleCharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("summaries:topic-detail", kwargs={"slug": self.slug})


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
        return self.filter(
            summary__status=Summary.Status.PUBLISHED,
            summary__publish_at__lte=now or timezone.now(),
        )


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
    thumbnail_url = models.URLField("thumbnail URL", max_length=500, blank=True)
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

    def save(self, *args, **kwargs):
        self.platform, self.platform_video_id = platforms.parse_video_url(self.source_url)
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("summaries:summary-detail", kwargs={"slug": self.slug})

    def clean(self):
        # Filled here too so that full_clean() checks the platform id's uniqueness.
        self.platform, self.platform_video_id = platforms.parse_video_url(self.source_url)

    def url_at(self, seconds: int) -> str:
        return platforms.video_url_at(
            self.source_url, self.platform, self.platform_video_id, seconds
        )


class RelatedLink(models.Model):
    """One stored "Related" entry of a video, computed by `related.refresh_related`.

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


class SummaryQuerySet(models.QuerySet):
    def published(self, now=None):
        """Live summaries: published and publish time reached (decided at read time)."""
        return self.filter(status=Summary.Status.PUBLISHED, publish_at__lte=now or timezone.now())

    def scheduled(self, now=None):
        """Published summaries whose publish time lies in the future."""
        return self.filter(status=Summary.Status.PUBLISHED, publish_at__gt=now or timezone.now())

    def with_admin_data(self):
        return self.select_related("video", "video__channel", "updated_by")


class Summary(TimestampedModel):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        IN_REVIEW = "review", "In review"
        PUBLISHED = "published", "Published"

    video = models.OneToOneField(Video, on_delete=models.PROTECT, related_name="summary")
    tldr = VisibleTextField(
        "in 30 seconds",
        max_length=SHORT_TEXT,
        help_text="What a reader should know in 30 seconds (plain text).",
    )
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.DRAFT, db_index=True
    )
    publish_at = models.DateTimeField(
        "publish time",
        null=True,
        blank=True,
        help_text="Published summaries go live at this time; a future time schedules them.",
    )
    first_published_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    search_document = models.TextField(
        editable=False,
        default="",
        help_text="Title, 30-second text, takeaways and chapter text as plain text, for search.",
    )
    # Optimistic locking: every save increments it; a save based on an older value is refused.
    lock_version = models.PositiveIntegerField(default=1, editable=False)

    objects = SummaryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "summaries"
        ordering = ["-publish_at", "-id"]
        permissions = [("publish_summary", "Can publish, schedule and unpublish summaries")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="published") | Q(publish_at__isnull=False),
                name="summary_published_has_time",
            ),
        ]
        indexes = [models.Index(fields=["status", "publish_at"], name="summary_visibility")]

    def __str__(self):
        return f"Summary of “{self.video}”" if self.video_id else "New summary"

    def save(self, *args, **kwargs):
        """Save, refusing to overwrite a version someone else saved since this one was read."""
        if self.pk and not self._state.adding:
            bumped = Summary.objects.filter(pk=self.pk, lock_version=self.lock_version).update(
                lock_version=F("lock_version") + 1
            )
            if not bumped:
                raise EditConflict(self)
            self.lock_version += 1
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "lock_version", "updated_at"}
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return self.video.get_absolute_url()

    def is_live(self, now=None) -> bool:
        return (
            self.status == self.Status.PUBLISHED
            and self.publish_at is not None
            and self.publish_at <= (now or timezone.now())
        )

    def is_scheduled(self, now=None) -> bool:
        return self.status == self.Status.PUBLISHED and not self.is_live(now)


class EditConflict(Exception):
    """Raised when a summary was saved by someone else after it was read."""

    def __init__(self, summary):
        self.summary = summary
        super().__init__(f"{summary} was changed by someone else; reload it and reapply your edit.")


@receiver(pre_save, sender=Summary)
def keep_lock_version_on_raw_save(sender, instance, raw, **kwargs):
    """Reverting a revision (a raw save) must not reset the lock version history excludes."""
    if raw and instance.pk:
        current = sender.objects.filter(pk=instance.pk).values_list("lock_version", flat=True)
        instance.lock_version = (current.first() or 0) + 1


class SummaryItem(models.Model):
    """Something listed in order within a summary; positions are unique per summary."""

    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["position"]

    @classmethod
    def position_constraint(cls, name):
        return models.UniqueConstraint(fields=["summary", "position"], name=name)


TIME_HELP = "Seconds into the video (optional)."


class KeyPoint(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="key_points")
    title = VisibleCharField(max_length=200)
    body = models.TextField(max_length=SHORT_TEXT, help_text="Markdown (one or two sentences).")
    body_html = models.TextField(editable=False, default="")
    time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)

    class Meta(SummaryItem.Meta):
        constraints = [SummaryItem.position_constraint("keypoint_position_unique")]

    def __str__(self):
        return self.title

    def save(self, *args, **kwargs):
        self.body_html = render_inline_markdown(self.body)
        super().save(*args, **kwargs)


class Takeaway(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="takeaways")
    text = models.TextField(
        max_length=SHORT_TEXT, help_text="Markdown; cite a source with [text](https://…)."
    )
    text_html = models.TextField(editable=False, default="")
    time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)

    class Meta(SummaryItem.Meta):
        constraints = [SummaryItem.position_constraint("takeaway_position_unique")]

    def __str__(self):
        return self.text[:80]

    def save(self, *args, **kwargs):
        self.text_html = render_inline_markdown(self.text)
        super().save(*args, **kwargs)


class Chapter(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="chapters")
    title = VisibleCharField(max_length=200)
    synopsis = VisibleTextField(
        blank=True, max_length=SHORT_TEXT, help_text="Two sentences shown above the text."
    )
    body = models.TextField(
        max_length=MAX_SOURCE_CHARS,
        help_text="Edited transcript in Markdown; cite with [text](https://…).",
    )
    body_html = models.TextField(editable=False, default="")
    start_time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)

    class Meta(SummaryItem.Meta):
        constraints = [
            SummaryItem.position_constraint("chapter_position_unique"),
            models.CheckConstraint(condition=~Q(body=""), name="chapter_body_not_empty"),
            models.CheckConstraint(condition=~Q(title=""), name="chapter_title_not_empty"),
        ]

    def __str__(self):
        return self.title

    def save(self, *args, **kwargs):
        self.body_html = render_markdown(self.body)
        super().save(*args, **kwargs)

    @property
    def anchor(self) -> str:
        return f"chapter-{self.position}"


class Caveat(SummaryItem):
    """An editorial note that qualifies a claim of the summary, a chapter or a takeaway."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="caveats")
    chapter = models.ForeignKey(
        Chapter, on_delete=models.CASCADE, related_name="caveats", null=True, blank=True
    )
    takeaway = models.ForeignKey(
        Takeaway, on_delete=models.CASCADE, related_name="caveats", null=True, blank=True
    )
    claim = VisibleCharField(
        max_length=300,
        blank=True,
        help_text="The words it qualifies, e.g. “2.5 times faster” (shown beside them).",
    )
    text = models.TextField(max_length=SHORT_TEXT, help_text="The note, in Markdown.")
    text_html = models.TextField(editable=False, default="")

    class Meta(SummaryItem.Meta):
        constraints = [
            SummaryItem.position_constraint("caveat_position_unique"),
            models.CheckConstraint(
                condition=Q(chapter__isnull=True) | Q(takeaway__isnull=True),
                name="caveat_one_target",
            ),
        ]

    def __str__(self):
        return self.text[:80]

    def save(self, *args, **kwargs):
        self.text_html = render_inline_markdown(self.text)
        super().save(*args, **kwargs)


class Source(TimestampedModel):
    """One normalised URL, shared by every citation of it, with its latest check result."""

    class State(models.TextChoices):
        UNCHECKED = "unchecked", "Not checked yet"
        OK = "ok", "OK"
        REDIRECTED = "redirected", "Redirected"
        BROKEN = "broken", "Broken"
        UNVERIFIABLE = "unverifiable", "Unverifiable (bot wall)"
        BLOCKED = "blocked", "Blocked (address not allowed)"
        ERROR = "error", "Error"

    url = models.URLField("URL", max_length=2000, unique=True)
    host = models.CharField(max_length=255, db_index=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.UNCHECKED)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    final_url = models.URLField(max_length=2000, blank=True)
    title = models.CharField(max_length=500, blank=True)
    content_type = models.CharField(max_length=200, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    error_class = models.CharField(max_length=40, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True)
    redirect_chain = models.JSONField(
        default=list, blank=True, help_text="Redirects of the latest check: [url, status] pairs."
    )
    error = models.CharField(max_length=500, blank=True, help_text="Detail of the latest error.")
    ignored = models.BooleanField(default=False, help_text="Ignored sources are never checked.")
    # A check in progress: the token of the batch that claimed the source and when the
    # claim lapses (a lost batch is then claimed again by the sweeper).
    check_token = models.CharField(max_length=32, blank=True, editable=False)
    claimed_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["url"]
        indexes = [
            models.Index(fields=["state", "next_check_at"], name="source_due"),
            models.Index(fields=["ignored", "next_check_at"], name="source_next_check"),
        ]

    def __str__(self):
        return self.url


class SourceCheck(models.Model):
    """One check of a source, kept as history (bounded per source by the checking service)."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="checks")
    # The batch that made the check: a batch redone after a lost worker writes no second row.
    token = models.CharField(max_length=32)
    checked_at = models.DateTimeField()
    state = models.CharField(max_length=20, choices=Source.State.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    final_url = models.URLField(max_length=2000, blank=True)
    redirect_chain = models.JSONField(default=list, blank=True)
    title = models.CharField(max_length=500, blank=True)
    content_type = models.CharField(max_length=200, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    error_class = models.CharField(max_length=40, blank=True)
    error = models.CharField(max_length=500, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["source", "-checked_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "token"], name="sourcecheck_once_per_batch")
        ]
        indexes = [models.Index(fields=["source", "-checked_at"], name="sourcecheck_history")]

    def __str__(self):
        return f"{self.source} at {self.checked_at:%Y-%m-%d %H:%M}: {self.state}"


class Citation(models.Model):
    """A link in a summary's text: which source it cites and the claim it supports."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="citations")
    chapter = models.ForeignKey(
        Chapter, on_delete=models.CASCADE, related_name="citations", null=True, blank=True
    )
    key_point = models.ForeignKey(
        KeyPoint, on_delete=models.CASCADE, related_name="citations", null=True, blank=True
    )
    takeaway = models.ForeignKey(
        Takeaway, on_delete=models.CASCADE, related_name="citations", null=True, blank=True
    )
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="citations")
    position = models.PositiveSmallIntegerField(default=0)
    url = models.URLField("URL as written", max_length=2000)
    link_text = models.CharField(max_length=500)
    claim = models.TextField(help_text="The sentence the link supports.")
    key_phrase = models.CharField(
        max_length=200,
        blank=True,
        help_text="A phrase or figure from the claim the source must contain.",
    )
    key_phrase_edited = models.BooleanField(
        default=False, help_text="Set when an editor changed the phrase; extraction keeps it."
    )

    class Verdict(models.TextChoices):
        UNCHECKED = "unchecked", "Not checked yet"
        SUPPORTED = "supported", "Supported"
        NOT_FOUND = "not_found", "Not found on source"
        CHANGED = "changed", "Source changed since confirmed"
        UNAVAILABLE = "unavailable", "Source could not be read"
        NO_PHRASE = "no_phrase", "No key phrase"

    verdict = models.CharField(
        max_length=20, choices=Verdict.choices, default=Verdict.UNCHECKED, editable=False
    )
    verdict_excerpt = models.TextField(
        blank=True, editable=False, help_text="Where the key phrase was found in the latest check."
    )
    verdict_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    confirmed_fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    confirmed_excerpt = models.TextField(blank=True, editable=False)
    confirmed_at = models.DateTimeField(null=True, blank=True, editable=False)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )

    class Meta:
        # Citations are rebuilt from the text on every save, so their order needs no constraint.
        ordering = ["summary", "position", "id"]

    def __str__(self):
        return f"{self.link_text} → {self.url}"


# Revision history: a summary's revision holds its ordered parts, so restoring one brings back
# the whole summary as it was. Citations are not stored: they are rebuilt from the text on save.
reversion.register(Channel)
reversion.register(Organisation)
reversion.register(Person)
reversion.register(Topic)
reversion.register(Appearance)
reversion.register(Video, follow=["appearances"])
reversion.register(KeyPoint)
reversion.register(Takeaway)
reversion.register(Chapter)
reversion.register(Caveat)
reversion.register(
    Summary,
    follow=["key_points", "takeaways", "chapters", "caveats"],
    exclude=["lock_version"],
)
