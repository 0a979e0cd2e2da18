"""Videos and what they refer to: channels, organisations, people, topics."""

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from summaries.editing import copies, save, video_changes
from summaries.models import (
    Appearance,
    Channel,
    Organisation,
    Person,
    Summary,
    Topic,
    Video,
)
from summaries.text.durations import format_duration
from summaries.thumbnails import queue_thumbnail

from .base import ContentAdmin
from .forms import VideoForm
from .receipts import VideoTranscriptsMixin
from .summary import change_comment


class AppearanceInline(admin.TabularInline):
    model = Appearance
    extra = 1
    autocomplete_fields = ["person", "organisation"]
    fields = ["person", "organisation", "position"]


@admin.register(Video)
class VideoAdmin(VideoTranscriptsMixin, ContentAdmin):
    form = VideoForm
    inlines = [AppearanceInline]
    list_display = ["title", "channel", "published_on", "length", "language", "has_summary"]
    list_filter = ["channel", "language", "topics", "platform"]
    search_fields = ["title", "slug", "blurb", "platform_video_id"]
    list_select_related = ["channel", "summary"]
    prepopulated_fields = {"slug": ["title"]}
    autocomplete_fields = ["channel", "topics"]
    readonly_fields = ["platform", "platform_video_id", "stored_thumbnail", "transcripts"]
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
        ("Transcripts", {"fields": ["transcripts"]}),
    ]

    # A video whose summary is published shows readers what its summary publishes: an
    # edit here becomes part of the summary's unpublished changes (editing.save.edit_video)
    # and reaches readers when a reviewer publishes them.

    def _published_summary(self, video):
        summary = Summary.objects.filter(video=video).first() if video and video.pk else None
        return summary if summary is not None and copies.needs_working_copy(summary) else None

    def get_object(self, request, object_id, from_field=None):
        video = super().get_object(request, object_id, from_field)
        summary = self._published_summary(video)
        copy = copies.working_copy_of(summary) if summary is not None else None
        if copy is not None and copy.video_changes:
            return video_changes.pending_video(video, copy.video_changes)
        return video

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if self._published_summary(obj) is not None:
            readonly.append("slug")  # its readers' address
        return readonly

    def get_prepopulated_fields(self, request, obj=None):
        if self._published_summary(obj) is not None:
            return {}
        return super().get_prepopulated_fields(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        video = Video.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if self._published_summary(video) is None:
            return super().change_view(request, object_id, form_url, extra_context)
        # The summary's services record the revision (of its unpublished changes).
        return admin.ModelAdmin.change_view(self, request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        if self._published_summary(obj) is None:
            super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        summary = self._published_summary(form.instance)
        if summary is None:
            super().save_related(request, form, formsets, change)
            # A new video, or a changed thumbnail or source URL: fetched after the commit.
            queue_thumbnail(video=form.instance)
            return
        people = None
        for formset in formsets:
            formset.save(commit=False)  # nothing saved: records what changed, for the message
            if formset.model is Appearance and formset.has_changed():
                people = _people(formset)
        topics = form.cleaned_data["topics"] if "topics" in form.changed_data else None
        save.edit_video(
            summary=summary,
            video=form.instance,
            people=people,
            topics=topics,
            user=request.user,
            comment=change_comment(self.construct_change_message(request, form, formsets, False)),
        )
        messages.info(
            request,
            "This video's summary is published: the change is kept with the summary's "
            "unpublished changes, and readers see it once a reviewer publishes them.",
        )

    def revision_view(self, request, object_id, version_id, extra_context=None):
        video = Video.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if self._published_summary(video) is None:
            return super().revision_view(request, object_id, version_id, extra_context)
        messages.error(
            request,
            "This video's summary is published, so an old version is not restored here: "
            "change the fields on the video's page, and the change waits for review.",
        )
        return HttpResponseRedirect(reverse("admin:summaries_video_history", args=[video.pk]))

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


def _people(formset) -> list[dict]:
    """The people an appearance formset lists after the save, in its order."""
    rows = [
        form.cleaned_data
        for form in formset.forms
        if form.cleaned_data.get("person") and not form.cleaned_data.get("DELETE")
    ]
    rows.sort(key=lambda row: row.get("position") or 0)
    return [{"person": row["person"], "organisation": row.get("organisation")} for row in rows]
