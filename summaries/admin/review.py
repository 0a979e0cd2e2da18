"""The summary page's review: what unpublished changes change, the review conversation,
and the reviewer asked to review.

What changed and who may say what are decided in summaries.editing (revisions, review);
this module finds the summary a request names and presents the result.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from summaries.editing import review
from summaries.editing.revisions import compare_live_and_changes

CHANGES_TEMPLATE = "admin/summaries/summary/changes.html"
REPLY_FIELD = "review_reply"
SUBMIT_MESSAGE_FIELD = "review_message"


class ReviewMixin:
    """For SummaryAdmin: a "What changed" page, replies and reviewer assignment."""

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}"
        own = [
            path(
                "<path:object_id>/changes/",
                self.admin_site.admin_view(self.changes_view),
                name=f"{name}_changes",
            ),
            path(
                "<path:object_id>/reply/",
                self.admin_site.admin_view(self.reply_view),
                name=f"{name}_reply",
            ),
            path(
                "<path:object_id>/assign/",
                self.admin_site.admin_view(self.assign_view),
                name=f"{name}_assign",
            ),
        ]
        # Before the admin's own URLs, whose last pattern takes any "<id>/…" path.
        return [*own, *super().get_urls()]

    def _summary(self, request, object_id):
        summary = self.get_object(request, unquote(object_id))
        if summary is None:
            raise Http404("No such summary.")
        if not self.has_view_or_change_permission(request, summary):
            raise PermissionDenied
        return summary

    def _page(self, summary) -> str:
        return reverse(f"{self.admin_site.name}:summaries_summary_change", args=[quote(summary.pk)])

    def changes_view(self, request, object_id):
        """The summary's unpublished changes against what readers see, as the compare
        page shows two revisions; back to the summary's page when it has none."""
        summary = self._summary(request, object_id)
        comparison = compare_live_and_changes(summary)
        if comparison is None:
            messages.info(request, "This summary has no unpublished changes.")
            return HttpResponseRedirect(self._page(summary))
        context = {
            **self.admin_site.each_context(request),
            "title": f"What changed: {summary}",
            "subtitle": None,
            "opts": self.model._meta,
            "object": summary,
            "change_url": self._page(summary),
            "comparison": comparison,
            "review_thread": review.thread(summary),
            "copy": summary.working_copy,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, CHANGES_TEMPLATE, context)

    def reply_view(self, request, object_id):
        """A reply in the summary's review conversation (the reply box on its page)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        summary = self._summary(request, object_id)
        try:
            review.reply(summary=summary, user=request.user, text=request.POST.get(REPLY_FIELD))
            messages.success(request, "Your reply was added to the review.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        except PermissionDenied as error:
            messages.error(request, str(error))
        return HttpResponseRedirect(self._page(summary))

    def assign_view(self, request, object_id):
        """Ask a reviewer (or nobody in particular) to review the summary."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        summary = self._summary(request, object_id)
        chosen = request.POST.get("assigned_to", "")
        reviewer = None
        if chosen:
            reviewer = (
                get_user_model().objects.filter(pk=chosen).first() if chosen.isdigit() else None
            )
            if reviewer is None:
                messages.error(request, "No such reviewer.")
                return HttpResponseRedirect(self._page(summary))
        try:
            review.assign_reviewer(summary=summary, reviewer=reviewer, user=request.user)
            who = reviewer.get_username() if reviewer else "no reviewer in particular"
            messages.success(request, f"Review assigned to {who}.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        except PermissionDenied as error:
            messages.error(request, str(error))
        return HttpResponseRedirect(self._page(summary))

    def review_context(self, request, obj) -> dict:
        """What the summary page shows of its review (its template's review include)."""
        if obj is None or not obj.pk:
            return {}
        summary = review.original(obj)
        has_changes = obj.is_working_copy
        thread = list(review.thread(summary))
        return {
            "review_thread": thread,
            "current_note_id": review.current_note_id(obj, thread),
            "reviewer_choices": list(review.reviewer_choices()),
            "assigned_reviewer_id": summary.assigned_to_id,
            "review_summary_id": summary.pk,
            "changes_url": reverse(
                f"{self.admin_site.name}:summaries_summary_changes", args=[quote(summary.pk)]
            )
            if has_changes
            else "",
        }

    @admin.display(description="Reviewer")
    def reviewer(self, summary):
        if not summary.pk:
            return "—"
        assigned = review.original(summary).assigned_to
        if assigned is None:
            return "Any reviewer"
        return assigned.get_full_name() or assigned.get_username()

    @admin.action(description="Assign selected summaries to me for review")
    def assign_to_me(self, request, queryset):
        count = 0
        for summary in queryset:
            try:
                review.assign_reviewer(summary=summary, reviewer=request.user, user=request.user)
                count += 1
            except (ValidationError, PermissionDenied) as error:
                messages.error(request, " ".join(getattr(error, "messages", [str(error)])))
                return
        if count:
            messages.success(
                request, f"Assigned {count} summar{'y' if count == 1 else 'ies'} to you."
            )

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context.update(self.review_context(request, obj))
        return super().render_change_form(request, context, add, change, form_url, obj)
