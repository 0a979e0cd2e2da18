"""The summary page of a published summary edits its working copy (editing.copies).

The page keeps the summary's address. Until the first save it shows the live summary; that
save makes the copy and saves onto it (the posted rows are mapped onto the copy's), and from
then on the page shows and saves the copy, with buttons to publish or discard the changes.
A preview button renders the reader page from the form as it is, saving nothing.
"""

import reversion
from django.contrib import messages
from django.contrib.admin import helpers
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from summaries.editing import copies
from summaries.models import Caveat, Chapter, Citation, KeyPoint, Summary, Takeaway
from summaries.reader.views_summary import SummaryPreviewView

from .forms import CAVEAT_TARGET_FIELDS

# Inline prefixes of the summary page and the model each one edits.
PREFIX_MODELS = {
    "key_points": KeyPoint,
    "takeaways": Takeaway,
    "chapters": Chapter,
    "caveats": Caveat,
    "citations": Citation,
}
# Fields that point at another part of the same summary.
TARGET_FIELDS = {"chapter": Chapter, "takeaway": Takeaway}
DISCARD_BUTTON = "_discard"
DISCARD_CONFIRMED = "_discard_confirmed"
DISCARD_TEMPLATE = "admin/summaries/summary/discard_confirm.html"
PREVIEW_BUTTON = "_preview"
STALE_PAGE_MESSAGE = (
    "The unpublished changes this page was opened on were published, discarded or saved "
    "by someone else after you opened it. Your changes are still in this form but were NOT "
    "saved. Open the summary in a new tab to see it as it is, copy your edits over there, "
    "and save that."
)


class _Undone(Exception):
    """Rolls back a save onto a working copy made for it; carries the answer to give."""

    def __init__(self, response):
        super().__init__("save undone")
        self.response = response


class _PreviewRendered(Exception):
    """Carries the preview out of the transaction that is rolled back."""

    def __init__(self, response):
        super().__init__("preview rendered")
        self.response = response


def map_onto_copy(post, ids: dict, copy: Summary, confirm_button: str):
    """The posted form with every live part, citation and target replaced by its copy's."""
    data = post.copy()
    for key in list(data.keys()):
        prefix, _, rest = key.partition("-")
        model = PREFIX_MODELS.get(prefix)
        field = rest.partition("-")[2]
        value = data.get(key, "")
        if model is None or not field:
            continue
        if field == "summary":
            data[key] = str(copy.pk)
        elif field == "id" and value.isdigit():
            data[key] = str(ids.get((model, int(value)), value))
        elif field in TARGET_FIELDS and value.isdigit():
            data[key] = str(ids.get((TARGET_FIELDS[field], int(value)), value))
        elif field == "target" and value.partition(":")[0] in CAVEAT_TARGET_FIELDS:
            # A caveat's chooser (admin.forms.CaveatForm): "key_point:<id>" and the like.
            name, _, target_id = value.partition(":")
            if target_id.isdigit():
                target = ids.get((CAVEAT_TARGET_FIELDS[name], int(target_id)), target_id)
                data[key] = f"{name}:{target}"
    # Buttons naming a citation: "Save and confirm", and "Use it" for a suggested key phrase.
    for button in (confirm_button, "_accept_key_phrase"):
        citation = data.get(button, "")
        if citation.isdigit():
            data[button] = str(ids.get((Citation, int(citation)), citation))
    return data


def _summary_id(object_id: str | None) -> int | None:
    """The summary id an admin address names, or None when it names none."""
    return int(object_id) if object_id is not None and object_id.isdigit() else None


class WorkingCopyMixin:
    """For SummaryAdmin: published summaries are edited through their working copy."""

    confirm_button = "_confirm_citation"

    def get_queryset(self, request):
        return super().get_queryset(request).originals().select_related("working_copy")

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        summary = self._published(object_id)
        posting = request.method == "POST"
        if summary is not None and posting and DISCARD_BUTTON in request.POST:
            return self._discard(request, summary)
        if posting and PREVIEW_BUTTON in request.POST:
            request.working_copy = copies.working_copy_of(summary) if summary else None
            return self._preview(request, object_id, form_url, extra_context)
        if summary is None:
            return super().changeform_view(request, object_id, form_url, extra_context)
        if not posting:
            request.working_copy = copies.working_copy_of(summary)
            return super().changeform_view(request, object_id, form_url, extra_context)
        return self._save_changes(request, summary, object_id, form_url, extra_context)

    def _published(self, object_id):
        """The published summary whose page this is; None for drafts and new summaries (and
        for an id that is not one: the admin's own view then says it does not exist)."""
        if _summary_id(object_id) is None:
            return None
        summary = Summary.objects.originals().filter(pk=object_id).first()
        return summary if summary is not None and copies.needs_working_copy(summary) else None

    def _save_changes(self, request, summary, object_id, form_url, extra_context):
        """Save the page onto the summary's working copy (editing.copies.edit_target), made
        for this save when it has none. In one transaction: a form with errors, or a save
        that changes nothing, leaves no copy behind."""
        posted = request.POST
        try:
            with transaction.atomic():
                copy, ids, made = copies.edit_target(summary=summary, user=request.user)
                request.working_copy = copy
                if ids:
                    request.POST = map_onto_copy(posted, ids, copy, self.confirm_button)
                response = super().changeform_view(request, object_id, form_url, extra_context)
                if made and response.status_code != 302:
                    raise _Undone(None)
                if made and copies.same_as_live(copy):
                    raise _Undone(response)
                return response
        except _Undone as undone:
            request.POST, request.working_copy = posted, None
            if undone.response is None:
                # The form again, with its errors, on the summary as it is.
                return super().changeform_view(request, object_id, form_url, extra_context)
            list(messages.get_messages(request))  # nothing was saved
            messages.info(request, "Nothing changed: there are no unpublished changes.")
            request.saved_summary = summary  # its buttons still act (check, confirm…)
            return undone.response

    def get_object(self, request, object_id, from_field=None):
        copy = getattr(request, "working_copy", None)
        if copy is not None:
            return (
                self.get_queryset(request)
                .model.objects.select_related("working_copy_of__video__channel", "updated_by")
                .get(pk=copy.pk)
            )
        return super().get_object(request, object_id, from_field)

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None or not obj.is_working_copy:
            return fieldsets
        # The changes are about the summary's video; which video it is does not change.
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f != "video"]})
            for name, options in fieldsets
        ]

    def response_change(self, request, obj):
        if obj.is_working_copy:
            obj = obj.working_copy_of  # the page's own address, also after publishing
        return super().response_change(request, obj)

    def history_view(self, request, object_id, extra_context=None):
        """The changes' History button names the copy: its history is its summary's."""
        copy = None
        if _summary_id(object_id) is not None:
            copy = Summary.objects.filter(pk=object_id, working_copy_of__isnull=False).first()
        if copy is not None:
            opts = self.model._meta
            return HttpResponseRedirect(
                reverse(
                    f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_history",
                    args=[copy.working_copy_of_id],
                )
            )
        return super().history_view(request, object_id, extra_context)

    def view_on_site(self, summary):
        """A live summary's reader page; anything readers cannot see yet (a draft, a
        scheduled summary, unpublished changes) its preview, not a 404."""
        video = summary.summarised_video
        if video is None:  # not saved yet
            return None
        if summary.is_live(timezone.now()):
            return summary.get_absolute_url()
        return reverse("summaries:summary-preview", kwargs={"slug": video.slug})

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.is_working_copy:
            # Another summary is added from the list, not from a summary's changes.
            context["show_save_and_add_another"] = False
        _conflict_only(context)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def _discard(self, request, summary):
        """Ask first; then drop the changes (kept in the summary's history)."""
        url = reverse("admin:summaries_summary_change", args=[summary.pk])
        if DISCARD_CONFIRMED not in request.POST:
            context = {
                **self.admin_site.each_context(request),
                "title": "Discard the unpublished changes?",
                "subtitle": None,
                "opts": self.model._meta,
                "object": summary,
                "original": summary,
                "change_url": url,
                "copy": copies.working_copy_of(summary),
            }
            request.current_app = self.admin_site.name
            return TemplateResponse(request, DISCARD_TEMPLATE, context)
        try:
            if copies.discard_changes(summary=summary, user=request.user):
                messages.success(
                    request,
                    "Discarded the unpublished changes: readers see no change. They are kept "
                    "in the summary's history, from where they can be restored.",
                )
        except PermissionDenied as error:
            messages.error(request, str(error))
        return HttpResponseRedirect(url)

    def _preview(self, request, object_id, form_url, extra_context):
        """Save the form in a transaction, render the reader page, then roll it all back.

        A preview stores nothing and queues nothing: no rows, no working copy, no log
        entry, no revision, no task. A form with errors is shown again as it would be
        after a save, except that on a published summary with no unpublished changes it
        is the summary's own form (the working copy made for the preview is gone).
        """
        changeform = super().changeform_view
        posted = request.POST
        outcome = {}

        def rolled_back(view):
            """What `view` answers, with everything it wrote to the database undone."""
            try:
                with transaction.atomic():
                    raise _PreviewRendered(view())
            except _PreviewRendered as rendered:
                return rendered.response

        def save_and_render(*, make_copy: bool):
            copy_made = False
            summary = self._published(object_id) if make_copy else None
            if summary is not None:
                # Where a save of this page would write (editing.copies.edit_target).
                copy, ids, copy_made = copies.edit_target(summary=summary, user=request.user)
                request.working_copy = copy
                if ids:
                    request.POST = map_onto_copy(posted, ids, copy, self.confirm_button)
            response = changeform(request, object_id, form_url, extra_context)
            if response.status_code != 302:
                # The form with its errors, rendered while the rows it names exist.
                outcome["errors_on_a_new_copy"] = copy_made
                return response.render()
            list(messages.get_messages(request))  # nothing was saved: no "saved" message
            return self._render_preview(request, object_id)

        response = rolled_back(lambda: save_and_render(make_copy=True))
        if outcome.get("errors_on_a_new_copy"):
            # Its ids were the rolled-back copy's: show the form on the summary itself.
            request.POST, request.working_copy = posted, None
            response = rolled_back(lambda: save_and_render(make_copy=False))
        if reversion.is_active() and transaction.get_connection().in_atomic_block:
            # A revision block of django-reversion's admin around this view
            # (VersionAdmin.change_view, add_view) holds every registered object it saw
            # saved, rolled back or not, and would record them when it ends; it records
            # nothing when its transaction, the innermost one here, is to be rolled back.
            transaction.set_rollback(True)
        return response

    def _render_preview(self, request, object_id):
        summary = Summary.objects.select_related("video").get(pk=object_id)
        request.method = "GET"
        response = SummaryPreviewView.as_view()(request, slug=summary.video.slug)
        response.render()
        return response


def _conflict_only(context) -> None:
    """On a form refused as stale, show the conflict alone, not its consequences.

    A page opened before someone else published, discarded or saved the changes posts
    rows that no longer exist where it saves ("Select a valid choice" on each): that is
    the conflict, said once above the form, with the editor's input kept.
    """
    adminform = context.get("adminform")
    form = getattr(adminform, "form", None)
    if form is None or not form.is_bound:
        return
    formsets = [inline.formset for inline in context.get("inline_admin_formsets", ())]
    gone = any(f.errors.get("id") for formset in formsets for f in formset.forms)
    conflict = form.has_error(NON_FIELD_ERRORS, "edit_conflict")
    if gone and not conflict:
        form.add_error(None, ValidationError(STALE_PAGE_MESSAGE, code="edit_conflict"))
        conflict = True
    if not conflict:
        return
    for formset in formsets:
        for inline_form in formset.forms:
            inline_form._errors = type(inline_form.errors)()
        formset._non_form_errors = formset.error_class()
    context["errors"] = helpers.AdminErrorList(form, [])
