"""Videos and what they refer to: channels, organisations, people, topics."""

from django import forms
from django.contrib import admin
from django.db import models
from django.utils.html import format_html

from summaries.models import (
    Appearance,
    Channel,
    Organisation,
    Person,
    Topic,
    Video,
)
from summaries.text.durations import format_duration
from summaries.thumbnails import queue_thumbnail

from .base import ContentAdmin
from .forms import VideoForm


class AppearanceInline(admin.TabularInline):
    model = Appearance
    extra = 1
    autocomplete_fields = ["person", "organisation"]
    fields = ["person", "organisation", "position"]


@admin.register(Video)
class VideoAdmin(ContentAdmin):
    form = VideoForm
    inlines = [AppearanceInline]
    list_display = ["title", "channel", "published_on", "length", "language", "has_summary"]
    list_filter = ["channel", "language", "topics", "platform"]
    search_fields = ["title", "slug", "blurb", "platform_video_id"]
    list_select_related = ["channel", "summary"]
    prepopulated_fields = {"slug": ["title"]}
    autocomplete_fields = ["channel", "topics"]
    readonly_fields = ["platform", "platform_video_id", "stored_thumbnail"]
    date_hierarchy = "published_on"
    fieldsets = [
        (None, {"fields": ["title", "slug", "channel", "blurb"]}),
        (
            "Source",
            {
                "fields": [
                    "source_url",
                    "platform",
                    "platform_video_id",
                    "thumbnail_url",
                    "stored_thumbnail",
                ]
            },
        ),
        (None, {"fields": ["duration_seconds", "language", "published_on", "topics"]}),
    ]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # A new video, or a changed thumbnail or source URL: fetched after the commit.
        queue_thumbnail(video=form.instance)

    @admin.display(description="Duration", ordering="duration_seconds")
    def length(self, video):
        return format_duration(video.duration_seconds)

    @admin.display(description="Stored thumbnail")
    def stored_thumbnail(self, video):
        """What readers see: the copy the worker stored, or why there is none."""
        if video.thumbnail is not None:
            return format_html(
                '<img src="{}" width="160" alt=""><br>From {} on {}',
                video.thumbnail.src,
                video.thumbnail_source,
                f"{video.thumbnail_fetched_at:%d %b %Y %H:%M} UTC"
                if video.thumbnail_fetched_at
                else "an unknown date",
            )
        if video.thumbnail_error:
            return (
                f"None stored: {video.thumbnail_error} ({video.thumbnail_source or 'no address'})"
            )
        return "None yet (fetched in the background after saving)."

    @admin.display(boolean=True, description="Summary")
    def has_summary(self, video):
        return hasattr(video, "summary")


@admin.register(Channel)
class ChannelAdmin(ContentAdmin):
    list_display = ["name", "slug", "site_url"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Organisation)
class OrganisationAdmin(ContentAdmin):
    list_display = ["name", "slug", "domains"]
    search_fields = ["name", "slug", "domains"]
    prepopulated_fields = {"slug": ["name"]}
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 3})}}

    def save_model(self, request, obj, form, change):
        obj.domains = "\n".join(obj.domain_list())
        super().save_model(request, obj, form, change)


@admin.register(Person)
class PersonAdmin(ContentAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Topic)
class TopicAdmin(ContentAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
