"""Importing a transcript, from a video's page or its summary's: the form, the view and
its refusals (a file too large, a stale CSRF token)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, RequestDataTooBig, ValidationError
from django.http import HttpResponse, HttpResponseRedirect
from django.middleware.csrf import CsrfViewMiddleware
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse

from summaries.editing import gate, pinning
from summaries.models import LANGUAGE_CHOICES, Transcript, Video
from summaries.text.durations import format_duration
from summaries.text.transcripts import TranscriptTooLong

from .shared import IMPORT_TEMPLATE

# --- Importing a transcript ---------------------------------------------------------------


class TranscriptImportForm(forms.Form):
    """A transcript file, or its text pasted, and the language it is in."""

    transcript_file = forms.FileField(
        required=False,
        label="Transcript file",
        help_text="WebVTT, SubRip, YouTube json3 or Whisper JSON.",
    )
    pasted = forms.CharField(
        required=False,
        strip=False,
        label="Or paste its text",
        widget=forms.Textarea(attrs={"rows": 12, "cols": 100, "class": "transcript-paste"}),
    )
    language = forms.ChoiceField(choices=LANGUAGE_CHOICES)
    # Set when the pasted text was larger than a request may carry (the form is unbound).
    paste_too_large = ""

    def clean_transcript_file(self):
        upload = self.cleaned_data.get("transcript_file")
        limit = settings.TRANSCRIPT_MAX_BYTES
        if upload is not None and upload.size > limit:
            raise ValidationError(too_large_message(upload.size), code="too_large")
        return upload

    def clean(self):
        cleaned = super().clean() or {}
        has_file = cleaned.get("transcript_file") is not None
        has_text = bool((cleaned.get("pasted") or "").strip())
        if not self.errors and has_file == has_text:
            raise ValidationError(
                "Choose a transcript file or paste its text (one of the two).", code="one_of"
            )
        return cleaned

    def source(self) -> tuple[bytes, str, str]:
        """(the bytes, the file's name, the field they came from)."""
        upload = self.cleaned_data.get("transcript_file")
        if upload is not None:
            return upload.read(), upload.name or "", "transcript_file"
        return self.cleaned_data["pasted"].encode("utf-8"), "", "pasted"

    def is_too_large(self) -> bool:
        """Whether the file is over TRANSCRIPT_MAX_BYTES (a 413); a file of too many words
        (TRANSCRIPT_MAX_WORDS) is an error of the form like any other."""
        return any(
            error.code == "too_large" and not isinstance(error.__cause__, TranscriptTooLong)
            for errors in self.errors.as_data().values()
            for error in errors
        )


def too_large_message(size: int | None = None) -> str:
    cap = filesizeformat(settings.TRANSCRIPT_MAX_BYTES)
    over = f"This one is {filesizeformat(size)}. " if size else ""
    return f"A transcript may be at most {cap}. {over}Import a smaller file, or split it."


def _request_too_large(request) -> bool:
    """Whether the request is larger than any import could be (refused before reading it)."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    ceiling = settings.TRANSCRIPT_MAX_BYTES + (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)
    return length.isdigit() and int(length) > ceiling


def _csrf_refusal(request):
    """The CSRF middleware's answer to the request (None: it passes).

    The import views are exempt from the middleware, which reads the body first and would
    answer pasted text over DATA_UPLOAD_MAX_MEMORY_SIZE with a bare 400; they read the body
    themselves (413 when it is too large) and then check the token exactly as it would."""
    middleware = CsrfViewMiddleware(lambda request: HttpResponse())
    return middleware.process_view(request, _no_view, (), {})


def _no_view(request) -> HttpResponse:
    return HttpResponse()  # the middleware reads only whether a view is exempt


def import_view(model_admin, request, *, video: Video, back_url: str, summary=None):
    """The "Import transcript" page of a video (or of its summary): a file or pasted text
    becomes the video's transcript waiting for review (`pinning.import_transcript`).

    A file over TRANSCRIPT_MAX_BYTES is answered with 413 and the cap; an error of the
    file is a form error naming its line; the pasted text stays in the form."""
    if not gate.may(request.user, gate.CHANGE):
        raise PermissionDenied
    initial = {"language": video.language}
    if request.method != "POST":
        return _import_page(model_admin, request, video, back_url, summary, initial=initial)
    if _request_too_large(request):
        form = TranscriptImportForm(initial=initial)
        return _import_page(model_admin, request, video, back_url, summary, form, 413)
    try:
        form = TranscriptImportForm(request.POST, request.FILES, initial=initial)
    except RequestDataTooBig:
        form = TranscriptImportForm(initial=initial)
        form.paste_too_large = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return _import_page(model_admin, request, video, back_url, summary, form, 413)
    refused = _csrf_refusal(request)
    if refused is not None:
        return refused
    if form.is_valid():
        data, filename, source = form.source()
        try:
            imported = pinning.import_transcript(
                video=video,
                data=data,
                user=request.user,
                filename=filename,
                language=form.cleaned_data["language"],
            )
        except ValidationError as error:
            form.add_error(source, error)
        else:
            _say_imported(request, imported)
            return HttpResponseRedirect(back_url)
    status = 413 if form.is_too_large() else 200
    return _import_page(model_admin, request, video, back_url, summary, form, status)


def _import_page(model_admin, request, video, back_url, summary, form=None, status=200, **kw):
    form = form if form is not None else TranscriptImportForm(initial=kw.get("initial"))
    existing = Transcript.objects.filter(video=video).without_text().order_by("language", "state")
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Import a transcript of “{video}”",
        "subtitle": None,
        "opts": model_admin.model._meta,
        "original": summary or video,
        "video": video,
        "form": form,
        "back_url": back_url,
        "transcripts": existing,
        "max_size": filesizeformat(settings.TRANSCRIPT_MAX_BYTES),
        "paste_max_size": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "paste_max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        "paste_too_large": form.paste_too_large,
        "too_large": status == 413,
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, IMPORT_TEMPLATE, context, status=status)


def _say_imported(request, imported: pinning.Imported) -> None:
    transcript = imported.transcript
    length = format_duration(int(transcript.ends_at))
    messages.success(
        request,
        f"Imported the transcript ({transcript.get_language_display()}, "
        f"{transcript.word_count:,} words, {length}). It waits for review and reaches "
        "readers when the summary is published.",
    )
    for warning in imported.warnings:
        messages.warning(request, f"Check the transcript: {warning}")
