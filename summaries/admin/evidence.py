"""The evidence of a citation for editors: what its page said when cited, and now."""

from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from summaries.checking import evidence
from summaries.editing.revisions import text_diff
from summaries.models import Citation


def evidence_link(citation):
    """A link to the citation's evidence page (shown for every citation with a key phrase)."""
    if not citation.key_phrase:
        return "—"
    url = reverse("admin:summaries_source_evidence", args=[citation.source_id, citation.pk])
    return format_html('<a href="{}">Then and now</a>', url)


def evidence_view(model_admin, request, source_id, citation_id):
    """The passage and page text kept when the citation was cited, beside the latest ones,
    the words that differ marked. Texts are extracted from the stored records and shown as
    plain text (escaped): the stored HTML is never rendered."""
    citation = get_object_or_404(
        Citation.objects.select_related("source", "summary"), pk=citation_id, source_id=source_id
    )
    comparison = evidence.compare_evidence(citation=citation)
    then, now = comparison.then, comparison.now
    then_text = then.text if then is not None and then.text is not None else None
    now_text = now.text if now is not None and now.text is not None else None
    diff = None
    if then_text is not None and now_text is not None:
        diff = text_diff(then_text, now_text)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"What the page said: {citation.link_text}",
        "opts": model_admin.model._meta,
        "citation": citation,
        "source": citation.source,
        "comparison": comparison,
        "then": then,
        "now": now,
        "diff": diff,
        "source_url": reverse("admin:summaries_source_change", args=[citation.source_id]),
    }
    return TemplateResponse(request, "admin/summaries/source/evidence.html", context)
