"""A summary's history page: what each revision did, by whom and when, and a page
comparing any two revisions side by side.

What changed is worked out by `summaries.editing.revisions`; this module only finds the
versions a request names, checks who may see them and presents the result.
"""

from dataclasses import dataclass
from datetime import datetime

import reversion
from django.contrib import messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from reversion.errors import RevertError
from reversion.models import Version

from summaries.editing.restore import history_versions
from summaries.editing.revisions import action_label, compare_revisions


@dataclass(frozen=True)
class HistoryEntry:
    """One row of the history page."""

    version_id: int
    date: datetime
    action: str
    comment: str
    user: object
    restore_url: str


class RevisionHistoryMixin:
    """For a VersionAdmin: history rows that say what happened, and a compare page.

    History lists the newest revision first, the one an editor usually looks for.
    """

    object_history_template = "admin/summaries/summary/object_history.html"
    compare_template = "admin/summaries/summary/compare.html"
    history_latest_first = True

    def get_urls(self):
        opts = self.model._meta
        compare = path(
            "<path:object_id>/history/compare/",
            self.admin_site.admin_view(self.compare_view),
            name=f"{opts.app_label}_{opts.model_name}_compare",
        )
        # Before the admin's own URLs, whose last pattern takes any "<id>/…" path.
        return [compare, *super().get_urls()]

    # The history page.

    def history_view(self, request, object_id, extra_context=None):
        response = super().history_view(request, object_id, extra_context)
        if isinstance(response, TemplateResponse) and response.context_data is not None:
            entries = self._history_entries(request, unquote(object_id))
            # The two newest are chosen already: one click compares the last change.
            newest = sorted((entry.version_id for entry in entries), reverse=True)[:2]
            response.context_data.update(
                revisions=entries,
                compare_url=self._url("compare", quote(unquote(object_id))),
                compare_to=newest[0] if newest else None,
                compare_from=newest[-1] if newest else None,
            )
        return response

    def _history_entries(self, request, object_id) -> list[HistoryEntry]:
        """The summary's revisions and those of its unpublished changes, newest first."""
        summary = self.model.objects.filter(pk=object_id).first()
        if summary is None:
            return []
        return [
            _entry(version, self._url("revision", quote(summary.pk), version.pk))
            for version in history_versions(summary)
        ]

    def log_addition(self, request, obj, message):
        action = _workflow_comment()
        entry = super().log_addition(request, obj, message)
        _keep_workflow_comment(action, entry)
        return entry

    def log_change(self, request, obj, message):
        action = _workflow_comment()
        entry = super().log_change(request, obj, message)
        _keep_workflow_comment(action, entry)
        return entry

    # The compare page.

    def compare_view(self, request, object_id):
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404("No such summary.")
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        history = self._url("history", quote(obj.pk))
        if not (request.GET.get("from") and request.GET.get("to")):
            messages.error(request, "Choose two revisions to compare.")
            return HttpResponseRedirect(history)
        older, newer = sorted(
            (self._version(obj, request.GET["from"]), self._version(obj, request.GET["to"])),
            key=lambda version: version.pk,
        )
        try:
            comparison = compare_revisions(older, newer)
        except RevertError as error:  # stored data this code can no longer read
            messages.error(request, f"These revisions cannot be compared: {error}")
            return HttpResponseRedirect(history)
        opts = self.model._meta
        context = {
            **self.admin_site.each_context(request),
            "title": f"Compare revisions of {obj}",
            "subtitle": None,
            "opts": opts,
            "object": obj,
            "history_url": history,
            "revisions": [_entry(older), _entry(newer)],
            "comparison": comparison,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, self.compare_template, context)

    def _version(self, obj, version_id: str) -> Version:
        """A version of this object, or 404: never one of another object."""
        # ASCII digits only, and few enough for the database's integers ("²" and
        # 10**30 are not ids, and must not reach int() or the query).
        if not (version_id.isascii() and version_id.isdigit() and len(version_id) <= 18):
            raise Http404("No such revision.")
        version = (
            Version.objects.get_for_object(obj)
            .select_related("revision", "revision__user", "revision__action")
            .filter(pk=int(version_id))
            .first()
        )
        if version is None:
            raise Http404("No such revision of this summary.")
        return version

    def _url(self, view: str, *args) -> str:
        opts = self.model._meta
        name = f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_{view}"
        return reverse(name, args=args)


def _workflow_comment() -> str:
    """What a workflow button on the form did (workflow.py words it: "Published", "Sent for
    review"…), before the admin sets the revision's comment to its change message."""
    return reversion.get_comment() if reversion.is_active() else ""


def _keep_workflow_comment(action: str, entry) -> None:
    """Put what the workflow button did first in the comment, which history shows beside
    the action (recorded by the workflow as data)."""
    if action and reversion.is_active():
        changed = entry.get_change_message()
        reversion.set_comment(f"{action.rstrip('.')}. {changed}" if changed else action)


def _entry(version, restore_url: str = "") -> HistoryEntry:
    revision = version.revision
    return HistoryEntry(
        version_id=version.pk,
        date=revision.date_created,
        action=action_label(revision),
        comment=revision.get_comment(),
        user=revision.user,
        restore_url=restore_url,
    )
