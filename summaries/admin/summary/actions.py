"""The summary changelist's bulk actions: publish, schedule, unpublish, send to review."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse

from summaries.editing import copies, receipts, workflow

from ..receipts import AdminMixin, refusal_html
from .buttons import _change_page


class ScheduleForm(forms.Form):
    publish_at = forms.DateTimeField(
        label="Publish at",
        help_text="YYYY-MM-DD HH:MM, server time zone (UTC). A past time publishes now.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )


class SummaryActionsMixin(AdminMixin):
    """SummaryAdmin's bulk actions (its get_actions hides those a user may not take)."""

    def _run_on_each(self, request, queryset, service, done, **kwargs):
        count = 0
        for summary in queryset:
            try:
                service(summary=summary, user=request.user, **kwargs)
                count += 1
            except receipts.PublicationRefused as refused:
                page = _change_page(summary)
                messages.error(request, refusal_html(refused, page, title=str(summary)))
            except ValidationError as error:
                messages.error(request, f"{summary}: {' '.join(error.messages)}")
            except PermissionDenied as error:
                messages.error(request, str(error))
                return
        if count:
            messages.success(request, f"{done} {count} summar{'y' if count == 1 else 'ies'}.")

    @admin.action(description="Publish selected summaries now")
    def publish_now(self, request, queryset):
        self._run_on_each(request, queryset, _publish_first_versions, "Published")

    @admin.action(description="Unpublish selected summaries")
    def unpublish(self, request, queryset):
        self._run_on_each(request, queryset, workflow.unpublish_summary, "Unpublished")

    @admin.action(description="Send selected summaries to review")
    def send_to_review(self, request, queryset):
        self._run_on_each(request, queryset, workflow.submit_for_review, "Sent to review")

    @admin.action(description="Schedule selected summaries…")
    def schedule(self, request, queryset):
        form = ScheduleForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            self._run_on_each(
                request,
                queryset,
                _publish_first_versions,
                "Scheduled",
                at=form.cleaned_data["publish_at"],
            )
            return HttpResponseRedirect(request.get_full_path())
        context = {
            **self.admin_site.each_context(request),
            "title": "Schedule summaries",
            "summaries": queryset,
            "form": form,
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/summaries/summary/schedule.html", context)


def _publish_first_versions(*, summary, user, **kwargs):
    """Publish (or schedule) a summary from the list; changes to a live one are refused,
    since the list's actions cannot ask what kind of change they are (typo fix, update
    or correction with its note), which readers are told."""
    if summary.working_copy_of is not None or copies.working_copy_of(summary) is not None:
        raise ValidationError(
            "it has changes to its live version: publish them from its page, where you say "
            "what kind of change they are."
        )
    return workflow.publish_summary(summary=summary, user=user, **kwargs)
