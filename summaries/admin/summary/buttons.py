"""The summary change form's buttons: workflow steps, citation confirm, key phrase, check now."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from summaries import checking
from summaries.editing import copies, derived, gate, receipts, workflow
from summaries.models import Citation
from summaries.text.citations import suggest_key_phrase

from ..forms import CHANGE_KIND_FIELD, CHANGE_NOTE_FIELD
from ..receipts import refusal_html
from ..review import SUBMIT_MESSAGE_FIELD
from .inlines import ACCEPT_KEY_PHRASE_BUTTON, CONFIRM_BUTTON

# "Check the sources now" (handled in SummaryAdmin.save_related).
CHECK_NOW_BUTTON = "_check_now"
# The change form's workflow buttons (SummaryAdmin._apply_workflow_button).
WORKFLOW_BUTTONS = ("_publish", "_unpublish", "_review", "_send_back")


class WorkflowButtonsMixin:
    """What SummaryAdmin does once a button of its change form was pressed and the page saved."""

    def _save_key_phrases(self, request, summary, key_phrases: dict) -> None:
        citations = Citation.objects.select_related("source", "summary").filter(
            summary=summary, pk__in=list(key_phrases)
        )
        for citation in citations:  # a citation whose link left the text is gone
            derived.set_key_phrase(
                citation=citation, phrase=key_phrases[citation.pk], user=request.user
            )

    def _accept_suggested_key_phrase(self, request, summary) -> None:
        """A citation's "Use it" button: its claim's suggested words become its key phrase
        (as if typed), unless it got a key phrase meanwhile."""
        pk = request.POST.get(ACCEPT_KEY_PHRASE_BUTTON, "")
        citation = (
            Citation.objects.select_related("source", "summary")
            .filter(summary=summary, pk=pk, key_phrase="")
            .first()
            if pk.isdigit()
            else None
        )
        suggestion = suggest_key_phrase(citation.claim) if citation else ""
        if suggestion:
            derived.set_key_phrase(citation=citation, phrase=suggestion, user=request.user)
            messages.success(
                request, f"Key phrase of “{citation.link_text}” set to “{suggestion}”."
            )

    def _apply_check_now_button(self, request, summary) -> None:
        """ "Check the sources now": queue checks of every source the summary cites."""
        if CHECK_NOW_BUTTON not in request.POST:
            return
        sources, queued = checking.request_summary_checks(summary=summary, user=request.user)
        busy = len(sources) - len(queued)
        message = f"Queued a check of {len(queued)} source{'s' if len(queued) != 1 else ''}."
        if busy:
            message += f" {busy} already being checked or ignored."
        messages.success(request, message)

    def _apply_confirm_button(self, request, summary):
        """The "Save and confirm" button of a citation: record what its source says now."""
        pk = request.POST.get(CONFIRM_BUTTON, "")
        citation = (
            Citation.objects.select_related("source").filter(summary=summary, pk=pk).first()
            if pk.isdigit()
            else None
        )
        if citation is None:
            return
        try:
            checking.confirm_citation(citation=citation, user=request.user)
            messages.success(request, f"Confirmed “{citation.link_text}” against its source.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))

    def _apply_workflow_button(self, request, summary) -> bool:
        """The change form's extra buttons: send to review, publish/schedule, unpublish.
        Returns False when the step was refused (the reason is the error message)."""
        try:
            if "_publish" in request.POST and self._may_publish(request):
                at = getattr(request, "publish_at_asked", summary.publish_at)
                summary = workflow.publish_summary(
                    summary=summary,
                    user=request.user,
                    at=at,
                    change_kind=request.POST.get(CHANGE_KIND_FIELD) or None,
                    note=request.POST.get(CHANGE_NOTE_FIELD, ""),
                )
                messages.success(request, self._published_message(summary, at))
            elif "_unpublish" in request.POST and self._may_publish(request):
                workflow.unpublish_summary(summary=summary, user=request.user)
                messages.success(request, "Unpublished: readers no longer see this summary.")
            elif "_review" in request.POST:
                message = request.POST.get(SUBMIT_MESSAGE_FIELD, "")
                workflow.submit_for_review(summary=summary, user=request.user, message=message)
                messages.success(request, "Sent for review.")
            elif "_send_back" in request.POST and self._may_publish(request):
                note = request.POST.get("review_note", "")
                workflow.send_back(summary=summary, user=request.user, note=note)
                messages.success(request, "Sent back to the editor with your note.")
        except receipts.PublicationRefused as refused:
            messages.error(request, refusal_html(refused, _change_page(summary)))
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        except PermissionDenied as error:
            messages.error(request, str(error))
        else:
            return True
        return False

    def _may_publish(self, request):
        if gate.may_publish(request.user):
            return True
        raise PermissionDenied("You do not have permission to publish summaries.")

    @staticmethod
    def _published_message(summary, at=None):
        if summary.is_scheduled():
            local = timezone.localtime(summary.publish_at)
            return f"Scheduled: goes live at {local:%Y-%m-%d %H:%M %Z}."
        if at is not None and at > timezone.now() and copies.working_copy_of(summary):
            local = timezone.localtime(at)
            return f"Scheduled: the changes go live at {local:%Y-%m-%d %H:%M %Z}."
        return "Published: readers can see this summary now."

    # Changelist actions.


def _change_page(summary) -> str:
    """The change page a summary (or its unpublished changes) is edited on."""
    original = summary.working_copy_of or summary
    return reverse("admin:summaries_summary_change", args=[original.pk])


def _back_with_the_refusal(request, summary):
    """Back to the summary's page after a refused workflow step, its refusal the answer:
    the admin's "changed successfully" would say the step was done."""
    kept = [m for m in messages.get_messages(request) if m.level != messages.SUCCESS]
    for message in kept:
        messages.add_message(request, message.level, message.message, message.extra_tags)
    return HttpResponseRedirect(_change_page(summary))
