"""Restoring a summary's old revision from its history page, and what django-reversion's
admin would otherwise do on its own.

A restore is an edit (`editing.restore`): a confirmation page says where the content will
go (the draft itself, or the unpublished changes of a published summary), and the POST
calls the service. django-reversion's own restore reverts every object the revision holds
and its deleted-object recovery brings a summary back as it was, publication included;
neither is offered for summaries.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from reversion.errors import RevertError

from summaries.editing import copies, restore
from summaries.models import Summary


class RestoreMixin:
    """For SummaryAdmin (after RevisionHistoryMixin): the restore page and no recovery."""

    restore_template = "admin/summaries/summary/restore_confirm.html"

    def revision_view(self, request, object_id, version_id, extra_context=None):
        summary = Summary.objects.originals().filter(pk=unquote(object_id)).first()
        if summary is None or not self.has_view_or_change_permission(request, summary):
            raise Http404("No such summary.")
        if not self.has_change_permission(request, summary):
            raise PermissionDenied
        version = self._version(summary, version_id)
        history = self._url("history", quote(summary.pk))
        if request.method == "POST":
            return self._restore(request, summary, version, history)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Restore {restore.describe(version)}?",
            "subtitle": None,
            "opts": self.model._meta,
            "object": summary,
            "original": summary,
            "version": version,
            "history_url": history,
            "compare_url": f"{self._url('compare', quote(summary.pk))}?from={version.pk}&to="
            f"{restore.history_versions(summary).values_list('pk', flat=True).first()}",
            "published": summary.status == Summary.Status.PUBLISHED,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, self.restore_template, context)

    def _restore(self, request, summary, version, history):
        had_changes = copies.working_copy_of(summary) is not None
        try:
            target, _made = restore.restore_revision(
                summary=summary, version=version, user=request.user
            )
        except (ValidationError, RevertError, PermissionDenied) as error:
            text = " ".join(error.messages) if isinstance(error, ValidationError) else str(error)
            messages.error(request, f"Not restored: {text}")
            return HttpResponseRedirect(history)
        if target.pk == summary.pk and had_changes:
            messages.info(
                request,
                "That version says what the published summary says: there are no "
                "unpublished changes any more (History keeps them).",
            )
        elif target.pk == summary.pk and summary.status == Summary.Status.PUBLISHED:
            messages.info(
                request, "That version says what the published summary says: nothing to restore."
            )
        elif target.is_working_copy:
            messages.success(
                request,
                f"Restored {restore.describe(version)} as unpublished changes: readers see "
                "no change until a reviewer publishes them.",
            )
        else:
            state = summary.get_status_display().lower()
            messages.success(
                request, f"Restored {restore.describe(version)}. The summary is still {state}."
            )
        return HttpResponseRedirect(self._url("change", quote(summary.pk)))

    def _version(self, obj, version_id: str):
        """A version of the summary's history (its own or its changes'), or 404."""
        if not (version_id.isascii() and version_id.isdigit() and len(version_id) <= 18):
            raise Http404("No such revision.")
        version = restore.history_versions(obj).filter(pk=int(version_id)).first()
        if version is None:
            raise Http404("No such revision of this summary.")
        return version

    def recoverlist_view(self, request, extra_context=None):
        raise Http404("Deleted summaries are not recovered from here.")

    def recover_view(self, request, version_id, extra_context=None):
        raise Http404("Deleted summaries are not recovered from here.")

    # django-reversion wraps these views in one revision of its own, into which every
    # revision the editing services record would be merged (a bulk publish would record
    # all its summaries in one revision, "Publish changes" the copy's parts under the
    # summary). The services record their own revisions instead.

    def add_view(self, request, form_url="", extra_context=None):
        return admin.ModelAdmin.add_view(self, request, form_url, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return admin.ModelAdmin.change_view(self, request, object_id, form_url, extra_context)

    def changelist_view(self, request, extra_context=None):
        return admin.ModelAdmin.changelist_view(self, request, extra_context)
