"""The check_sources command: the workers' code path in the foreground."""

import json

import pytest
from django.core.management import CommandError, call_command

from summaries.models import Citation, Source, SourceCheck
from tests.factories import ChapterFactory
from tests.test_checking import cite, internal, site, url  # noqa: F401 - fixtures
from tests.test_linkcheck_fetch import page, redirect, title_page

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fetch_settings(settings):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_DEADLINE = 3.0


def test_urls_with_claims_write_a_json_report(site, internal, tmp_path):  # noqa: F811
    site.routes["/ok"] = page(body=title_page("Fast &amp; sure", "It is 2.5× faster."))
    site.routes["/moved"] = redirect(301, "/ok")
    site.routes["/sneaky"] = redirect(302, url(internal, "/secret"))
    urls = [url(site, p) for p in ("/ok", "/missing", "/moved", "/sneaky")]
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text("# a comment\n" + "\n".join(urls) + "\n\n")
    claims_file = tmp_path / "claims.json"
    claims_file.write_text(json.dumps({urls[0]: "2.5 times faster", urls[2]: "4x cheaper"}))
    out = tmp_path / "out.json"

    call_command("check_sources", urls=str(urls_file), claims=str(claims_file), json=str(out))

    report = json.loads(out.read_text())
    assert list(report) == urls
    assert report[urls[0]] == {
        "state": "ok",
        "status": 200,
        "final_url": urls[0],
        "title": "Fast & sure",
        "description": None,
        "error_class": None,
        "claim": "supported",
    }
    assert report[urls[1]]["state"] == "broken" and report[urls[1]]["status"] == 404
    assert report[urls[1]]["claim"] is None
    assert report[urls[2]]["state"] == "redirected"  # moved for good: update the link
    assert report[urls[2]]["final_url"] == urls[0]
    assert report[urls[2]]["claim"] == "not_found"
    assert report[urls[3]]["state"] == "blocked"
    assert report[urls[3]]["error_class"] == "blocked"
    assert internal.hits["/secret"] == 0
    assert not Source.objects.exists()  # ad-hoc URLs are not stored


def test_summary_checks_and_records_its_sources(site, tmp_path, capsys):  # noqa: F811
    site.routes["/a"] = page(body=title_page("A", "It is 2.5x faster."))
    link = url(site, "/a")
    summary, _ = cite(("It is 2.5 times faster", link), phrases={link: "2.5x faster"})
    other = ChapterFactory(body=f"Elsewhere [x]({url(site, '/other')}).")
    out = tmp_path / "out.json"

    call_command("check_sources", summary=summary.video.slug, json=str(out))

    report = json.loads(out.read_text())
    assert report == {
        link: {
            "state": "ok",
            "status": 200,
            "final_url": link,
            "title": "A",
            "description": None,
            "error_class": None,
            "claim": "supported",
        }
    }
    source = Source.objects.get(url=link)
    assert source.state == "ok" and source.last_checked_at and not source.check_token
    assert SourceCheck.objects.filter(source=source).count() == 1
    assert Citation.objects.get(source=source).verdict == "supported"
    assert site.hits["/other"] == 0 and other.pk
    captured = capsys.readouterr()
    assert "1/1" in captured.err  # the progress indicator
    assert "Checked 1 URL(s). ok: 1" in captured.out


def test_all_checks_every_source_but_ignored_ones(site):  # noqa: F811
    site.routes["/a"] = page(body=title_page("A"))
    checked = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    ignored = Source.objects.create(url=url(site, "/b"), host="127.0.0.2", ignored=True)
    call_command("check_sources", all=True, no_progress=True)
    checked.refresh_from_db()
    ignored.refresh_from_db()
    assert checked.state == "ok"
    assert ignored.state == "unchecked" and site.hits["/b"] == 0


def test_unknown_summary_and_claims_without_urls_are_errors(tmp_path):
    with pytest.raises(CommandError, match="No summary"):
        call_command("check_sources", summary="nope")
    with pytest.raises(CommandError, match="--claims goes with --urls"):
        call_command("check_sources", all=True, claims=str(tmp_path / "c.json"))
