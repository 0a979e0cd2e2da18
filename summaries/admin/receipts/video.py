"""The video page's transcripts (VideoTranscriptsMixin) and the transcripts' own read-only
pages (TranscriptAdmin, registered here)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import admin
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.csrf import csrf_exempt
from reversion.admin import VersionAdmin

from summaries.models import Transcript, Video
from summaries.text.durations import format_duration

from ..base import ReadOnlyAdmin
from .shared import AdminMixin
from .upload import import_view

# --- The video page -------------------------------------------------------------------------


class VideoTranscriptsMixin(AdminMixin):
    """For VideoAdmin: the video's transcripts, and its "Import transcript" page."""

    def get_urls(self):
        opts = self.model._meta
        own = [
            path(
                "<path:object_id>/transcript/",
                # Checked by import_view itself, once the body is read (_csrf_refusal).
                self.admin_site.admin_view(csrf_exempt(self.transcript_import_view)),
                name=f"{opts.app_label}_{opts.model_name}_transcript_import",
            )
        ]
        return [*own, *cast(Any, super()).get_urls()]

    def transcript_import_view(self, request, object_id):
        object_id = unquote(object_id)
        video = Video.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if video is None:
            raise Http404("No such video.")
        if not self.has_view_or_change_permission(request, video):
            raise PermissionDenied
        back = reverse(f"{self.admin_site.name}:summaries_video_change", args=[quote(video.pk)])
        return import_view(self, request, video=video, back_url=back)

    @admin.display(description="Transcripts")
    def transcripts(self, video):
        if not video or not video.pk:
            return "Available after the first save."
        found = Transcript.objects.filter(video=video).without_text()
        items = format_html_join(
            "",
            '<li><a href="{}">{}, {}</a>: {} words, {}</li>',
            (
                (
                    reverse("admin:summaries_transcript_change", args=[t.pk]),
                    t.get_language_display(),
                    t.get_state_display().lower(),
                    f"{t.word_count:,}",
                    format_duration(int(t.ends_at)),
                )
                for t in found.order_by("language", "state")
            ),
        )
        url = reverse(
            f"{self.admin_site.name}:summaries_video_transcript_import", args=[quote(video.pk)]
        )
        listed = format_html("<ul>{}</ul>", items) if items else "None yet. "
        return format_html('{}<a class="button" href="{}">Import transcript</a>', listed, url)


# --- The transcripts' own pages -----------------------------------------------------------


@admin.register(Transcript)
class TranscriptAdmin(ReadOnlyAdmin, VersionAdmin):
    """Transcripts as imported: read only (a new one is imported from its video's page or
    its summary's), with the history of each import."""

    list_display = ["video", "language", "state", "format", "words", "length", "updated_at"]
    list_filter = ["state", "language", "format"]
    search_fields = ["video__title"]
    list_select_related = ["video"]
    fields = [
        "video_link",
        "language",
        "state",
        "format",
        "encoding",
        "original_name",
        "words",
        "length",
        "warnings_list",
        "updated_by",
        "updated_at",
    ]
    readonly_fields = fields
    actions = None

    def get_queryset(self, request):
        # The list and the page show what a transcript is, never its text or file.
        return super().get_queryset(request).without_text().select_related("video", "updated_by")

    def has_view_permission(self, request, obj=None):
        # Whoever reads summaries reads the transcripts their statements are pinned to.
        return request.user.is_active and request.user.has_perm("summaries.view_summary")

    @admin.display(description="Video")
    def video_link(self, transcript):
        url = reverse("admin:summaries_video_change", args=[transcript.video_id])
        return format_html('<a href="{}">{}</a>', url, transcript.video)

    @admin.display(description="Words", ordering="word_count")
    def words(self, transcript):
        return f"{transcript.word_count:,}"

    @admin.display(description="Length", ordering="ends_at")
    def length(self, transcript):
        return format_duration(int(transcript.ends_at))

    @admin.display(description="Warnings")
    def warnings_list(self, transcript):
        if not transcript.warnings:
            return "None."
        return format_html(
            "<ul>{}</ul>",
            format_html_join("", "<li>{}</li>", ((warning,) for warning in transcript.warnings)),
        )
