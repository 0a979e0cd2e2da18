"""Search over published summaries (placeholder until full-text search lands)."""

from .models import Summary


def search_summaries(query: str, *, now=None):
    """Live summaries whose text contains the query (case-insensitive)."""
    query = " ".join(query.split())[:200]
    if not query:
        return Summary.objects.none()
    return Summary.objects.published(now).filter(search_document__icontains=query)
