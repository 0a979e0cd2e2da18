"""A key phrase set while its source is being checked is checked as soon as that check ends.

The check under way did not read the page for a phrase (its citations had none when it
started), and a check asked for meanwhile is skipped (the source is claimed): the source
must be due again at once, its citation still unchecked, not "could not be read" for a week.
"""

import pytest
from django.utils import timezone

from summaries import checking
from summaries.editing import derived
from summaries.models import Citation, Source
from tests.test_checking import cite, fetch_settings, site, url  # noqa: F401 (fixtures)
from tests.test_linkcheck_fetch import page, title_page

pytestmark = pytest.mark.django_db


def test_a_phrase_set_during_the_check_is_checked_right_after_it(site, fetch_settings):  # noqa: F811
    site.routes["/speed"] = page(body=title_page("Speed", "Model X is 2.5x faster."))
    summary, (citation,) = cite(("Model X is fast", url(site, "/speed")))
    Citation.objects.filter(pk=citation.pk).update(key_phrase="")
    source = citation.source
    token, ids = checking.claim_sources(queryset=Source.objects.filter(pk=source.pk), limit=1)

    def editor_sets_the_phrase(_source, _result):
        citation.refresh_from_db()
        derived.set_key_phrase(citation=citation, phrase="2.5x faster", user=None)

    checking.check_source_batch(source_ids=ids, token=token, on_result=editor_sets_the_phrase)

    citation.refresh_from_db()
    source.refresh_from_db()
    assert citation.key_phrase == "2.5x faster"
    assert citation.verdict == Citation.Verdict.UNCHECKED
    assert source.next_check_at <= timezone.now()

    # The next due sweep checks it, with the phrase.
    assert checking.dispatch_due_checks() == [source.pk]
    source.refresh_from_db()
    checking.check_source_batch(source_ids=[source.pk], token=source.check_token)
    citation.refresh_from_db()
    assert citation.verdict == Citation.Verdict.SUPPORTED


def test_a_page_read_for_its_phrase_is_judged_at_once(site, fetch_settings):  # noqa: F811
    site.routes["/speed"] = page(body=title_page("Speed", "Model X is 2.5x faster."))
    summary, (citation,) = cite(
        ("Model X is fast", url(site, "/speed")), phrases={url(site, "/speed"): "2.5x faster"}
    )
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=1)
    checking.check_source_batch(source_ids=ids, token=token)
    citation.refresh_from_db()
    citation.source.refresh_from_db()
    assert citation.verdict == Citation.Verdict.SUPPORTED
    assert citation.source.next_check_at > timezone.now()
