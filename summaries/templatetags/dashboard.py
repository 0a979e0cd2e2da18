"""The editors' dashboard on the admin index: what needs the signed-in user now."""

from django import template
from django.db.models import Q
from django.utils import timezone

from summaries.checking.record import PROBLEM_STATES, PROBLEM_VERDICTS
from summaries.editing import gate
from summaries.models import Citation, Source, Summary

register = template.Library()

LIMIT = 20


def _with_page(summaries):
    """Each summary with the id of its admin page (a working copy's is its summary's)."""
    rows = list(summaries.select_related("video", "working_copy_of__video", "updated_by")[:LIMIT])
    for summary in rows:
        summary.page_id = summary.working_copy_of_id or summary.pk
    return rows


def _sources_needing_attention():
    """Sources that are broken, erring or unreadable, or no longer support a claim, with the
    summaries citing them."""
    problem = Q(state__in=[str(state) for state in PROBLEM_STATES]) | Q(
        citations__verdict__in=list(PROBLEM_VERDICTS)
    )
    sources = list(
        Source.objects.filter(problem, ignored=False)
        .distinct()
        .order_by("-last_checked_at")[:LIMIT]
    )
    citations = Citation.objects.filter(source__in=sources).select_related(
        "summary__video", "summary__working_copy_of__video"
    )
    citing, verdicts = {}, {}
    for citation in citations:
        summary = citation.summary
        summary.page_id = summary.working_copy_of_id or summary.pk
        citing.setdefault(citation.source_id, {})[summary.page_id] = summary
        if citation.verdict in PROBLEM_VERDICTS:
            verdicts.setdefault(citation.source_id, set()).add(citation.get_verdict_display())
    for source in sources:
        source.citing = list(citing.get(source.pk, {}).values())
        source.problem_verdicts = ", ".join(sorted(verdicts.get(source.pk, ()))).lower()
    return sources


@register.inclusion_tag("admin/summaries/includes/dashboard.html", takes_context=True)
def editor_dashboard(context):
    user = context["request"].user
    can_review = gate.may_publish(user)
    mine = Summary.objects.filter(
        Q(created_by=user) | Q(updated_by=user),
        status__in=[Summary.Status.DRAFT, Summary.Status.IN_REVIEW],
    ).order_by("-updated_at")
    scheduled = Summary.objects.filter(
        Q(status=Summary.Status.PUBLISHED, publish_at__gt=timezone.now())
        | Q(working_copy_of__isnull=False, publish_at__isnull=False)
    ).order_by("publish_at")
    return {
        "can_review": can_review,
        "awaiting_review": _with_page(Summary.objects.in_review().order_by("updated_at"))
        if can_review
        else [],
        "my_work": _with_page(mine),
        "scheduled": _with_page(scheduled),
        "sources": _sources_needing_attention(),
        # "Every cited source checks out" only means something once sources were checked.
        "sources_checked": Source.objects.filter(last_checked_at__isnull=False).exists(),
    }
