import datetime
import io

import pytest
import reversion
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core import serializers
from django.core.management import call_command
from django.urls import reverse
from reversion.models import Revision, Version

from summaries.demo import load_demo
from summaries.editing import rules, save, workflow
from summaries.models import (
    Appearance,
    Caveat,
    Chapter,
    Citation,
    KeyPoint,
    Source,
    Summary,
    Takeaway,
    Video,
)

from .admin_forms import form_fields

MAIN_SLUG = "speed-maxis-unite-why-fast-ai-models-matter-for-agents"
ANTHROPIC_LINK = "https://www.anthropic.com/research/measuring-agent-autonomy"
OPENAI_LINK = "https://openai.com/index/introducing-gpt-5-3-codex-spark/"

pytestmark = pytest.mark.django_db


def run_load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


@pytest.fixture
def summary():
    run_load_demo()
    return Summary.objects.get(video__slug=MAIN_SLUG)


def snapshot() -> dict:
    """Every row of every table the project and reversion own, as plain values."""
    tables = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.app_label in ("summaries", "reversion"):
            tables[model._meta.label] = list(model.objects.order_by("pk").values())
    return tables


def test_main_summary_has_the_example_tldr_key_points_and_takeaways(summary):
    assert summary.tldr == (
        "Matthew Berman says the speed of AI models matters alongside output quality, especially "
        "when agents work without a person reading each token. He cites Claude Opus 4.6 Fast Mode "
        "and GPT-5.3-Codex-Spark as examples."
    )
    key_points = list(summary.key_points.values_list("position", "title", "body"))
    assert key_points == [
        (
            1,
            "A case for speed",
            "Berman has long valued model speed and argues that it matters alongside quality.",
        ),
        (
            2,
            "Agents and reading speed",
            "An agent can act on model output without waiting for a person to read it, making "
            "speed important for its workflow.",
        ),
        (
            3,
            "Two fast options",
            "Berman points to Opus 4.6 Fast Mode and GPT-5.3-Codex-Spark as examples of the trend.",
        ),
    ]
    takeaways = list(summary.takeaways.values_list("position", "text"))
    assert [position for position, _ in takeaways] == [1, 2, 3, 4]
    assert takeaways[1][1] == (
        "Anthropic says Opus 4.6 Fast Mode generates output 2.5 times faster than its regular mode."
    )
    assert takeaways[2][1] == (
        "OpenAI reported more than 1,000 tokens per second for GPT-5.3-Codex-Spark on Cerebras "
        "hardware."
    )
    assert takeaways[3][1].startswith("Token generation speed is only one factor")


def test_chapters_keep_the_speakers_words_and_drop_the_editorial_notes(summary):
    first, second = summary.chapters.all()
    assert (first.position, first.title) == (1, "Why speed matters")
    assert first.synopsis == (
        "Berman argues that fast output is especially useful for agents doing real-world work. "
        "He contrasts this with a focus on model quality alone."
    )
    assert first.body.startswith(
        "I feel vindicated: I have been a “speed maxi” for AI models for a long time."
    )
    assert (second.position, second.title) == (2, "Faster model releases")
    assert second.synopsis.startswith("He cites Anthropic’s Fast Mode and OpenAI’s Codex-Spark.")
    assert f"[Anthropic says]({ANTHROPIC_LINK}) that this mode generates output" in second.body
    assert f"Its [February 2026 announcement]({OPENAI_LINK}) described" in second.body
    assert second.body.endswith("initially to ChatGPT Pro users. Speed maxis unite.")
    assert "This is a comparison of output generation speed" not in second.body
    assert "Actual task time also depends" not in second.body
    assert f'<a href="{ANTHROPIC_LINK}"' in second.body_html


def test_caveats_are_attached_to_the_claims_they_qualify(summary):
    second_chapter = summary.chapters.get(position=2)
    second_takeaway = summary.takeaways.get(position=2)
    caveats = list(Caveat.objects.filter(summary=summary).order_by("position"))
    assert [(c.chapter_id, c.takeaway_id, c.claim) for c in caveats] == [
        (second_chapter.pk, None, "2.5 times faster"),
        (second_chapter.pk, None, "1,000 tokens per second"),
        (None, second_takeaway.pk, "2.5 times faster"),
    ]
    assert caveats[0].text == (
        "This is a comparison of output generation speed, not necessarily a 2.5-fold "
        "improvement in every complete task."
    )
    assert caveats[1].text == (
        "Actual task time also depends on input processing, tool execution and network "
        "overhead; speed alone does not establish output quality."
    )
    assert "output generation speed" in caveats[2].text


def test_citations_cite_the_two_links_with_their_sentences(summary):
    citations = list(summary.citations.select_related("source", "chapter"))
    assert [(c.link_text, c.url, c.chapter.position) for c in citations] == [
        ("Anthropic says", ANTHROPIC_LINK, 2),
        ("February 2026 announcement", OPENAI_LINK, 2),
    ]
    assert [c.claim for c in citations] == [
        "Anthropic says that this mode generates output 2.5 times faster than regular Opus 4.6.",
        "Its February 2026 announcement described a smaller coding model offered as a research "
        "preview, initially to ChatGPT Pro users.",
    ]
    assert [c.source.url for c in citations] == [
        "https://www.anthropic.com/research/measuring-agent-autonomy",
        "https://openai.com/index/introducing-gpt-5-3-codex-spark/",
    ]
    assert Source.objects.count() == 2


def test_main_video_card(summary):
    video = summary.video
    assert video.channel.name == "Matthew Berman"
    assert video.channel.site_url == "https://www.youtube.com/@matthew_berman"
    assert video.published_on == datetime.date(2026, 10, 28)
    assert video.platform == Video.Platform.YOUTUBE
    assert len(video.platform_video_id) == 11
    assert [str(a) for a in video.appearances.all()] == ["Matthew Berman · Forward Future"]


def test_more_from_this_channel_lists_the_six_example_videos(summary):
    others = (
        Video.objects.published()
        .filter(channel=summary.video.channel)
        .exclude(pk=summary.video.pk)
        .with_listing_data()
    )
    cards = [(v.title, v.published_on, v.duration_seconds, v.language) for v in others]
    assert cards == [
        (
            "Matthew Berman Examines Anthropic’s IPO Filing, AI Growth and Governance",
            datetime.date(2026, 10, 27),
            2061,
            "en",
        ),
        (
            "Sam Altman on Human Values and Problem-Solving in an AI World",
            datetime.date(2026, 10, 25),
            26,
            "en",
        ),
        (
            "Kimi K3.1 and a Rubik’s Cube Solver Demonstration",
            datetime.date(2026, 10, 25),
            36,
            "en",
        ),
        (
            "An AI-Generated Kimi Benchmark Chart Used Invented Scores",
            datetime.date(2026, 10, 24),
            21,
            "en",
        ),
        (
            "Kimi K3.1 Pro Tested: Strong 3D Demos, Uneven Results and Competitive Pricing",
            datetime.date(2026, 10, 24),
            1550,
            "en",
        ),
        (
            "Who Is Local AI For? The Costs, Trade-offs and a Hybrid Future",
            datetime.date(2026, 10, 23),
            1940,
            "en",
        ),
    ]
    assert others[0].blurb == (
        "The presenter reviews the S-1’s financial metrics, compute strategy and voting structure "
        "while questioning the tension between rapid AI development and safety."
    )
    assert others[5].blurb == (
        "Matthew Berman weighs data control and independence against hardware cost, setup "
        "complexity and inference speed."
    )
    assert len({v.platform_video_id for v in others}) == 6
    for video in others:
        assert video.summary.tldr == video.blurb
        assert video.summary.chapters.count() == 0


def test_appearances_carry_each_persons_own_organisation(summary):
    first = Video.objects.get(title__startswith="Matthew Berman Examines Anthropic")
    assert [str(a) for a in first.appearances.all()] == [
        "Matthew Berman · Forward Future",
        "Sam Altman · OpenAI",
    ]
    second = Video.objects.get(title__startswith="Sam Altman on Human Values")
    assert [str(a) for a in second.appearances.all()] == ["Sam Altman · OpenAI"]


def test_demo_summaries_are_published_and_live(summary):
    assert summary.status == Summary.Status.PUBLISHED
    assert summary.publish_at == datetime.datetime(2026, 10, 28, 14, 0, tzinfo=datetime.UTC)
    live = Summary.objects.published()
    assert summary in live
    assert live.count() == 7


PARTS = (KeyPoint, Takeaway, Chapter, Caveat, Citation)


def belongings(summary: Summary) -> set[tuple[type, int]]:
    """The summary, its parts, its video and the video's appearances, as (model, pk)."""
    owned = {(Summary, summary.pk), (Video, summary.video_id)}
    for model in PARTS:
        owned |= {
            (model, pk) for pk in model.objects.filter(summary=summary).values_list("pk", flat=True)
        }
    appearances = Appearance.objects.filter(video=summary.video_id).values_list("pk", flat=True)
    return owned | {(Appearance, pk) for pk in appearances}


def held(revision: Revision) -> set[tuple[type, int]]:
    return {(v.content_type.model_class(), int(v.object_id)) for v in revision.version_set.all()}


def test_each_demo_summary_gets_a_revision_holding_only_itself_and_what_belongs_to_it(summary):
    summary_type = ContentType.objects.get_for_model(Summary)
    with_summaries = Revision.objects.filter(version__content_type=summary_type).distinct()

    assert with_summaries.count() == Summary.objects.count() == 7
    for revision in with_summaries:
        summaries = [model_pk for model_pk in held(revision) if model_pk[0] is Summary]
        assert len(summaries) == 1, revision.get_comment()
        own = Summary.objects.get(pk=summaries[0][1])
        assert held(revision) <= belongings(own)
        assert {(Chapter, c.pk) for c in own.chapters.all()} <= held(revision)
        assert (Video, own.video_id) in held(revision)
        assert revision.get_comment() == "Loaded the demo content"
    for demo_summary in Summary.objects.all():
        assert Version.objects.get_for_object(demo_summary).count() == 1


def test_second_run_changes_nothing(summary):
    before = snapshot()
    revisions, versions = Revision.objects.count(), Version.objects.count()
    updated_at = summary.updated_at

    assert load_demo() == {"created": {}, "updated": {}, "deleted": {}}
    assert "nothing changed" in run_load_demo()

    assert snapshot() == before
    assert (Revision.objects.count(), Version.objects.count()) == (revisions, versions)
    assert Summary.objects.get(pk=summary.pk).updated_at == updated_at


def test_rerun_restores_edited_demo_content_in_a_new_revision(summary):
    chapter = summary.chapters.get(position=1)
    Chapter.objects.filter(pk=chapter.pk).update(title="Edited")
    Caveat.objects.filter(summary=summary, position=3).delete()
    before = Revision.objects.count()

    counts = load_demo()

    assert counts["updated"] == {"Chapter": 1}
    assert counts["created"] == {"Caveat": 1, "Pin": 1}  # the caveat pinned again
    assert summary.chapters.get(position=1).title == "Why speed matters"
    # One new revision, of the one summary that changed.
    assert Revision.objects.count() == before + 1
    latest = Revision.objects.latest("pk")
    assert latest.comment == "Loaded the demo content"
    assert held(latest) <= belongings(summary)
    assert (Summary, summary.pk) in held(latest)
    assert Citation.objects.filter(summary=summary).count() == 2


def test_first_run_reports_what_it_created():
    counts = load_demo()

    assert counts["created"]["Video"] == 7
    assert counts["created"]["Summary"] == 7
    assert counts["created"]["Appearance"] == 8
    assert counts["created"]["Citation"] == 2
    assert counts["updated"] == {}
    assert counts["deleted"] == {}


def test_demo_summary_has_no_editor_warnings(summary):
    assert rules.summary_warnings(summary=summary) == []


@pytest.mark.django_db
def test_if_missing_keeps_an_editors_changes_to_the_demo():
    call_command("load_demo", stdout=io.StringIO())
    summary = Summary.objects.get(video__slug=MAIN_SLUG)
    summary.tldr = "Edited by an editor."
    summary.save()
    out = io.StringIO()
    call_command("load_demo", "--if-missing", stdout=out)
    summary.refresh_from_db()
    assert summary.tldr == "Edited by an editor."
    assert "already loaded" in out.getvalue()


def test_the_demo_editor_writes_and_reviews(tmp_path, settings):
    """`make run` prints one login: it can write, publish and send back."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    settings.VAR_DIR = tmp_path
    call_command("create_demo_editor", stdout=io.StringIO())
    editor = get_user_model().objects.get(username="editor")
    assert {group.name for group in editor.groups.all()} == {"Editors", "Reviewers"}
    assert editor.has_perm("summaries.publish_summary")
    assert editor.has_perm("summaries.change_summary")


# --- Restoring any demo revision changes only its own summary ----------------------------


def rows(queryset) -> list[dict]:
    """Every field of every row (Markdown, HTML, times, many-to-many ids), as serialized."""
    return serializers.serialize("python", queryset.order_by("pk"))


def others(restored: Summary) -> dict:
    """Every row of the summaries other than `restored` (and its working copy), of their
    parts, and of every other video with its appearances."""
    summaries = Summary.objects.exclude(pk=restored.pk).exclude(working_copy_of=restored.pk)
    videos = Video.objects.exclude(pk=restored.video_id)
    tables = {
        "Summary": rows(summaries),
        "Video": rows(videos),
        "Appearance": rows(Appearance.objects.filter(video__in=videos)),
    }
    for model in PARTS:
        tables[model.__name__] = rows(model.objects.filter(summary__in=summaries))
    return tables


def publication() -> dict:
    """Each summary's status, publish time and first publication."""
    fields = ("pk", "status", "publish_at", "first_published_at")
    return {row[0]: row[1:] for row in Summary.objects.originals().values_list(*fields)}


@pytest.fixture
def edited_demo():
    """The demo as its users left it: a reviewer unpublished the main summary, which was
    then rewritten (its video too), and another video was retitled on its own page.
    Returns that superuser."""
    run_load_demo()
    superuser = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    main = Summary.objects.get(video__slug=MAIN_SLUG)
    workflow.unpublish_summary(summary=main, user=superuser)
    save.update_summary(
        summary=Summary.objects.get(pk=main.pk),
        data={"tldr": "Rewritten while unpublished.", "video": {"title": "Retitled draft"}},
        user=superuser,
        partial=True,
    )
    video = Video.objects.exclude(slug=MAIN_SLUG).order_by("pk").first()
    with reversion.create_revision():  # as the video's admin page saves it
        video.title = "Retitled on the video's page"
        video.save()
        reversion.set_user(superuser)
    return superuser


def test_restoring_any_demo_revision_leaves_other_summaries_videos_and_publication_alone(
    client, edited_demo
):
    """Each revision of each demo summary, restored through the admin's restore page: every
    other summary, its parts and every other video stay byte for byte as they were, and no
    summary's publication changes (the restored summary's own text is not checked: where a
    restore of a published summary lands is the restore's business)."""
    client.force_login(edited_demo)
    restores = [
        (summary, version)
        for summary in Summary.objects.originals().order_by("pk")
        for version in Version.objects.get_for_object(summary).order_by("pk")
    ]
    assert len(restores) >= 9  # the 7 loaded, and the main summary's unpublish and rewrite

    for summary, version in restores:
        before, published = others(summary), publication()
        url = reverse("admin:summaries_summary_revision", args=[summary.pk, version.pk])
        form = client.get(url)
        assert form.status_code == 200

        response = client.post(url, form_fields(form))

        what = f"restoring “{version.revision.get_comment()}” of {summary.video.slug}"
        assert response.status_code == 302, (what, response.content.decode()[:3000])
        assert others(summary) == before, what
        assert publication() == published, what


def test_the_demo_summaries_answer_memento_after_loading(client):
    """The demo's live summaries are written, not published through review: the command
    records their current version, so a new site's TimeMap and TimeGate are not 404s."""
    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", "--if-missing", stdout=io.StringIO())  # nothing twice
    for summary in Summary.objects.published():
        page = summary.get_absolute_url()
        assert client.get(f"{page}timemap/").status_code == 200
        assert summary.published_versions.count() == 1
