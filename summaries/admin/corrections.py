"""Updates and corrections in the admin: read-only records, withdrawn with a reason.

Records are written when changes go live (editing.corrections); nobody adds, changes or
deletes one here. A correction or update readers were shown can be withdrawn, which is
recorded on it and shown to readers ("Withdrawn on …: reason").
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from summaries.editing import corrections, gate
from summaries.models import Correction
from summaries.models.corrections import NOTE_CHARS
from summaries.reader.corrections import what_changed_html

from .base import ReadOnlyAdmin

WITHDRAW_TEMPLATE = "admin/summaries/correction/withdraw.html"
# What a record's page shows, all read-only.
SHOWN = (
    "summary",
    "kind",
    "note",
    "published_at",
    "published_by",
    "what_changed",
    "withdrawn_at",
    "withdrawn_by",
    "withdrawal_note",
)


class WithdrawForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        max_length=NOTE_CHARS,
        help_text="Shown to readers under the withdrawn note.",
    )


@admin.register(Correction)
class CorrectionAdmin(ReadOnlyAdmin, admin.ModelAdmin):
    list_display = [
        "published_at",
        "kind",
        "summary_changes",
        "note_start",
        "published_by",
        "withdrawn",
    ]
    list_filter = ["kind", ("withdrawn_at", admin.EmptyFieldListFilter)]
    list_select_related = ["summary__video", "published_by"]
    search_fields = ["summary__video__title", "note"]
    date_hierarchy = "published_at"
    fields = SHOWN
    readonly_fields = SHOWN
    actions = None  # no bulk delete; withdrawal is one at a time, with its reason

    # Who sees them: whoever edits summaries. Nobody adds, changes or deletes one
    # (ReadOnlyAdmin).
    def has_module_permission(self, request):
        return gate.may(request.user, gate.CHANGE)

    def has_view_permission(self, request, obj=None):
        return gate.may(request.user, gate.CHANGE)

    @admin.display(description="summary", ordering="summary")
    def summary_changes(self, correction):
        """The summary, linking to the list of its own published changes."""
        url = reverse("admin:summaries_correction_changelist")
        return format_html(
            '<a href="{}?summary__id__exact={}">{}</a>',
            url,
            correction.summary_id,
            correction.summary,
        )

    @admin.display(description="note")
    def note_start(self, correction):
        return correction.note[:80]

    @admin.display(description="withdrawn", boolean=True)
    def withdrawn(self, correction):
        return correction.is_withdrawn

    @admin.display(description="what changed")
    def what_changed(self, correction):
        return what_changed_html(correction.changes)

    def get_urls(self):
        withdraw = self.admin_site.admin_view(self.withdraw_view)
        return [
            path("<int:pk>/withdraw/", withdraw, name="summaries_correction_withdraw"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        correction = (
            Correction.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        )
        if correction is not None and correction.is_public and not correction.is_withdrawn:
            if gate.may_publish(request.user):
                extra_context = {
                    **(extra_context or {}),
                    "withdraw_url": reverse(
                        "admin:summaries_correction_withdraw", args=[correction.pk]
                    ),
                }
        return super().change_view(request, object_id, form_url, extra_context)

    def withdraw_view(self, request, pk):
        """Ask for the reason; then withdraw (editing.corrections.withdraw_correction)."""
        correction = get_object_or_404(Correction.objects.select_related("summary"), pk=pk)
        url = reverse("admin:summaries_correction_change", args=[pk])
        form = WithdrawForm(request.POST if request.method == "POST" else None)
        if form.is_valid():
            try:
                corrections.withdraw_correction(
                    correction=correction, user=request.user, note=form.cleaned_data["reason"]
                )
            except PermissionDenied as error:
                messages.error(request, str(error))
                return HttpResponseRedirect(url)
            except ValidationError as error:
                form.add_error(None, error.messages)
            else:
                messages.success(request, "Withdrawn: readers are shown that, with your reason.")
                return HttpResponseRedirect(url)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Withdraw this {correction.get_kind_display().lower()}?",
            "opts": self.model._meta,
            "correction": correction,
            "form": form,
            "change_url": url,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, WITHDRAW_TEMPLATE, context)
