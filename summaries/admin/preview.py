"""Live Markdown preview on the summary page: what an editor types, as readers will get it.

`MarkdownPreviewMixin` gives the summary admin one endpoint,
`admin:summaries_summary_markdown_preview` (POST `field`, `text` → JSON `{"html": ...}`),
and loads static/summaries/js/markdown-preview.js, which shows the rendered text below each
Markdown textarea while the editor types. The HTML comes from the same functions the
models store (summaries.text.markdown), so the preview is what saving will show. Staff who
may add or change summaries only, CSRF-protected (admin_view), capped at each field's
max_length. The page works without the script: the saved preview stays.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.core.exceptions import PermissionDenied
from django.db import models
from django.forms.widgets import Script
from django.http import JsonResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from summaries.editing.rules import link_problems
from summaries.models import Caveat, Chapter, KeyPoint, Takeaway
from summaries.text.markdown import render_inline_markdown, render_markdown

SCRIPT = "summaries/js/markdown-preview.js"
STYLE = "summaries/css/markdown-preview.css"


@dataclass(frozen=True)
class PreviewedField:
    """A Markdown field of a summary part and the function its model renders it with."""

    model: type[models.Model]
    name: str
    render: Callable[[str], str]

    @property
    def max_length(self) -> int:
        return self.model._meta.get_field(self.name).max_length


# "<inline formset prefix>-<field>" (a textarea's name without its row number) -> field.
# Each render function is the one the model's save() stores as the part's HTML.
PREVIEWED_FIELDS = {
    "key_points-body": PreviewedField(KeyPoint, "body", render_inline_markdown),
    "takeaways-text": PreviewedField(Takeaway, "text", render_inline_markdown),
    "chapters-body": PreviewedField(Chapter, "body", render_markdown),
    "caveats-text": PreviewedField(Caveat, "text", render_inline_markdown),
}


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


class MarkdownPreviewMixin:
    """For SummaryAdmin: the preview endpoint and the script that calls it."""

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}_markdown_preview"
        view = self.admin_site.admin_view(require_POST(self.markdown_preview_view))
        return [path("markdown-preview/", view, name=name), *super().get_urls()]

    @property
    def media(self):
        opts = self.model._meta
        url = reverse(f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_markdown_preview")
        script = Script(
            SCRIPT,
            **{"data-preview-url": url, "data-preview-fields": " ".join(PREVIEWED_FIELDS)},
        )
        return super().media + forms.Media(js=[script], css={"all": [STYLE]})

    def markdown_preview_view(self, request):
        """POST `field` (e.g. chapters-body) and `text`: {"html": the sanitised HTML,
        "problems": the links saving would refuse (editing.rules.link_problems)}."""
        if not (self.has_change_permission(request) or self.has_add_permission(request)):
            raise PermissionDenied
        field = PREVIEWED_FIELDS.get(request.POST.get("field", ""))
        if field is None:
            known = ", ".join(PREVIEWED_FIELDS)
            given = request.POST.get("field", "")[:50]
            return _error(f"No preview for the field “{given}”: one of {known}.")
        text = request.POST.get("text")
        if text is None:
            return _error("Send the text to preview in “text”.")
        if len(text) > field.max_length:
            return _error(
                f"Too long to save: at most {field.max_length:,} characters "
                f"(this text has {len(text):,})."
            )
        # Links the save would refuse (javascript:, private addresses…), said while typing.
        return JsonResponse({"html": field.render(text), "problems": link_problems(text)})
