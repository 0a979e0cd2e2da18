"""Writing whole summaries through the API: nested create and update, validation, atomicity,
optimistic concurrency (If-Match), workflow actions and revision history."""

import copy
import datetime
import uuid
from collections import Counter

import markdown
import nh3
import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.demo import data as demo_data
from summaries.editing import rules
from summaries.models import (
    Caveat,
    Channel,
    Chapter,
    Citation,
    KeyPoint,
    Organisation,
    Person,
    Source,
    Summary,
    Takeaway,
    Topic,
    Video,
)
from summaries.tasks import check_source_batch

from .counting import calls_made
from .factories import (
    ChapterFactory,
    EditorFactory,
    SummaryFactory,
    UserFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/summaries/"


def detail_url(slug):
    return f"/api/v1/summaries/{slug}/"


def current_tag(client, slug):
    """The ETag a workflow action expects: of the unpublished changes, if any."""
    changes = client.get(f"{detail_url(slug)}working-copy/")
    if changes.status_code == 200:
        return changes["ETag"]
    return client.get(detail_url(slug))["ETag"]


def act(client, slug, action, data=None, **headers):
    """POST a workflow action with the If-Match it needs (unless one is given)."""
    headers.setdefault("HTTP_IF_MATCH", current_tag(client, slug))
    return client.post(f"{detail_url(slug)}{action}/", data or {}, format="json", **headers)


@pytest.fixture
def catalogue():
    """The channel, organisations, people and topics the example summary refers to."""
    Channel.objects.create(**{k: v for k, v in demo_data.CHANNEL.items()})
    for organisation in demo_data.ORGANISATIONS:
        Organisation.objects.create(**organisation)
    for person in demo_data.PEOPLE:
        Person.objects.create(**person)
    for topic in demo_data.TOPICS:
        Topic.objects.create(**topic)


def example_payload():
    """The published example (the speed summary) as an editor's tool sends it."""
    video = demo_data.MAIN_VIDEO
    summary = demo_data.MAIN_SUMMARY
    return {
        "video": {
            "slug": video["slug"],
            "title": video["title"],
            "channel": demo_data.CHANNEL["slug"],
            "source_url": video["source_url"],
            "duration": "12:40",
            "language": "en",
            "published_on": video["published_on"].isoformat(),
            "blurb": video["blurb"],
            "topics": video["topics"],
            "people": [
                {"person": person, "organisation": organisation}
                for person, organisation in video["appearances"]
            ],
        },
        "tldr": summary["tldr"],
        "key_points": [dict(point, time="1:05") for point in summary["key_points"]],
        "takeaways": [{"text": text} for text in summary["takeaways"]],
        "chapters": [dict(chapter) for chapter in summary["chapters"]],
        "caveats": [dict(caveat) for caveat in summary["caveats"]],
    }


def create_example(api):
    response = api.post(LIST_URL, example_payload(), format="json")
    assert response.status_code == 201, response.json()
    return response


def fields_of(response):
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"status", "code", "message", "fields"}
    return body["error"]["fields"]


# --- Create -----------------------------------------------------------------------------


def test_create_writes_the_whole_summary_in_one_request(reviewer_api, catalogue, reviewer):
    response = create_example(reviewer_api)
    body = response.json()
    slug = demo_data.MAIN_VIDEO["slug"]
    assert response["Location"].endswith(detail_url(slug))
    assert response["ETag"].startswith('"1-')
    assert body["status"] == "draft"
    assert body["video"]["duration_seconds"] == 760
    assert [p["person"]["slug"] for p in body["video"]["people"]] == ["matthew-berman"]
    assert body["video"]["people"][0]["organisation"]["slug"] == "forward-future"
    assert sorted(t["slug"] for t in body["video"]["topics"]) == sorted(
        demo_data.MAIN_VIDEO["topics"]
    )
    assert [k["position"] for k in body["key_points"]] == [1, 2, 3]
    assert body["key_points"][0]["time"] == 65
    assert [c["title"] for c in body["chapters"]] == ["Why speed matters", "Faster model releases"]
    assert "<a href=" in body["chapters"][1]["body_html"]
    assert [(c["chapter"], c["takeaway"]) for c in body["caveats"]] == [
        (2, None),
        (2, None),
        (None, 2),
    ]
    assert {c["source"]["url"] for c in body["citations"]} == {
        demo_data.ANTHROPIC_LINK,
        demo_data.OPENAI_LINK,
    }
    assert body["citations"][0]["source"]["state"] == "unchecked"

    summary = Summary.objects.get(video__slug=slug)
    assert summary.created_by == reviewer and summary.updated_by == reviewer
    assert "Why speed matters" in summary.search_document
    assert Citation.objects.filter(summary=summary).count() == 2


def test_create_records_one_revision_with_the_parts(reviewer_api, catalogue, reviewer):
    create_example(reviewer_api)
    summary = Summary.objects.get(video__slug=demo_data.MAIN_VIDEO["slug"])
    versions = Version.objects.get_for_object(summary)
    assert versions.count() == 1
    revision = versions[0].revision
    assert revision.user == reviewer
    assert "API" in revision.get_comment()
    models = {v.content_type.model for v in revision.version_set.all()}
    assert {"summary", "keypoint", "takeaway", "chapter", "caveat", "video"} <= models
    chapter_versions = [v for v in revision.version_set.all() if v.content_type.model == "chapter"]
    assert sorted(v.field_dict["position"] for v in chapter_versions) == [1, 2]


def test_create_uses_an_existing_video_without_a_summary(reviewer_api, catalogue):
    video = VideoFactory(slug=demo_data.MAIN_VIDEO["slug"], channel=Channel.objects.get())
    create_example(reviewer_api)
    video.refresh_from_db()
    assert video.title == demo_data.MAIN_VIDEO["title"]
    assert video.summary.tldr == demo_data.MAIN_SUMMARY["tldr"]


def test_create_refuses_a_video_that_already_has_a_summary(reviewer_api, catalogue):
    SummaryFactory(video__slug=demo_data.MAIN_VIDEO["slug"])
    response = reviewer_api.post(LIST_URL, example_payload(), format="json")
    assert response.status_code == 400
    assert "already has a summary" in fields_of(response)["video.slug"][0]


def test_create_needs_an_editor(catalogue):
    client = APIClient()
    assert client.post(LIST_URL, example_payload(), format="json").status_code == 401
    client.force_authenticate(UserFactory())
    assert client.post(LIST_URL, example_payload(), format="json").status_code == 403
    assert not Summary.objects.exists()


# --- Validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda p: p["video"].update(duration="12:75"), "video.duration", "34:21"),
        (lambda p: p["video"].update(duration=0), "video.duration", "longer than zero"),
        (lambda p: p["video"].update(duration=10**9), "video.duration", "longer than a week"),
        (lambda p: p["video"].update(source_url="ftp://x.example/v"), "video.source_url", "URL"),
        (
            lambda p: p["video"].update(source_url="https://u:pw@www.youtube.com/watch?v=abc"),
            "video.source_url",
            "user name",
        ),
        (lambda p: p["video"].update(channel="nope"), "video.channel", "does not exist"),
        (lambda p: p["video"].update(topics=["nope"]), "video.topics[0]", "does not exist"),
        (lambda p: p["video"].update(language="xx"), "video.language", "not a valid choice"),
        (lambda p: p.update(tldr=""), "tldr", "blank"),
        (lambda p: p.update(tldr="x" * 4001), "tldr", "4000"),
        (lambda p: p["chapters"][1].update(title="t" * 201), "chapters[1].title", "200"),
        (lambda p: p["chapters"][0].update(body="   "), "chapters[0].body", "blank"),
        (lambda p: p["key_points"][2].update(time="soon"), "key_points[2].time", "34:21"),
        (lambda p: p.update(chapters=[{"title": "x", "body": "y"}] * 201), "chapters", "200"),
        (lambda p: p.update(bogus=1), "bogus", "Unknown field"),
        (lambda p: p["chapters"][0].update(colour="red"), "chapters[0].colour", "Unknown"),
        (lambda p: p.update(status="published"), "status", "publish"),
        (lambda p: p["chapters"][0].update(body_html="<p>"), "chapters[0].body_html", "Read-only"),
    ],
)
def test_invalid_input_names_the_field(reviewer_api, catalogue, change, field, message):
    payload = example_payload()
    change(payload)
    response = reviewer_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 400, response.json()
    fields = fields_of(response)
    assert field in fields, fields
    assert message in " ".join(fields[field])
    assert response.json()["error"]["code"] == "invalid"
    assert not Summary.objects.exists()
    assert not Video.objects.exists()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1/admin", "loopback"),
        ("http://2130706433/", "numeric host"),
        ("http://0x7f.1/", "numeric host"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://[::127.0.0.1]/", "IPv4-compatible"),
        ("http://[64:ff9b::7f00:1]/", "NAT64"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("https://user:secret@example.com/", "userinfo"),
        ("https://example.com:22/", "port 22"),
        ("https://example.com:8443/", "port 8443"),
        ("http://localhost/", "not a public host"),
        ("http://printer.local/", "not a public host"),
        ("http://intranet/", "not a public host"),
    ],
)
def test_cited_links_follow_the_address_policy(reviewer_api, catalogue, url, why):
    payload = example_payload()
    payload["chapters"][0]["body"] += f" See [this]({url})."
    response = reviewer_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 400
    messages = " ".join(fields_of(response)["chapters[0].body"])
    assert why in messages


def test_a_time_after_the_video_ends_is_an_error_naming_the_item(reviewer_api, catalogue):
    payload = example_payload()
    payload["takeaways"][0]["time"] = "13:00"
    payload["chapters"][1]["start_time"] = "12:40"
    fields = fields_of(reviewer_api.post(LIST_URL, payload, format="json"))
    assert "13:00 is after the video ends (12:40)" in fields["takeaways[0].time"][0]
    assert "12:40 is after the video ends (12:40)" in fields["chapters[1].start_time"][0]


def test_chapters_out_of_time_order_are_a_warning_in_the_answer(reviewer_api, catalogue):
    """The same rule as the admin's: a warning, not an error (chapters may go by theme)."""
    payload = example_payload()
    payload["chapters"][0]["start_time"] = "2:00"
    payload["chapters"][1]["start_time"] = "1:00"
    response = reviewer_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 201, response.json()
    warnings = response.json()["warnings"]
    assert {
        "where": "Chapter 2 “Faster model releases”",
        "message": "starts at 1:00, not after the chapter before it (2:00).",
    } in warnings
    # The warnings are not part of the representation a GET answers with, nor its ETag.
    detail = reviewer_api.get(detail_url(response.json()["slug"]))
    assert "warnings" not in detail.json() and detail["ETag"] == response["ETag"]


def test_caveat_targets_must_exist(reviewer_api, catalogue):
    payload = example_payload()
    payload["caveats"][0]["chapter"] = 3
    payload["caveats"][1]["takeaway"] = 1
    fields = fields_of(reviewer_api.post(LIST_URL, payload, format="json"))
    assert fields["caveats[0].chapter"] == ["There is no chapter 3."]
    assert "not several" in fields["caveats[1]"][0]


def test_duplicate_platform_video_is_a_field_error(reviewer_api, catalogue):
    VideoFactory(title="Twin", source_url="https://youtu.be/DEMOspeed01")
    fields = fields_of(reviewer_api.post(LIST_URL, example_payload(), format="json"))
    assert "already here as “Twin”" in fields["video.source_url"][0]


def test_a_failure_after_validation_saves_nothing(reviewer_api, catalogue, monkeypatch):
    from summaries.editing import save

    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(save, "refresh_derived_data", explode)
    reviewer_api.raise_request_exception = False
    response = reviewer_api.post(LIST_URL, example_payload(), format="json")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"
    assert not Summary.objects.exists()
    assert not Video.objects.exists()
    assert not KeyPoint.objects.exists()
    assert not Version.objects.exists()


def explode(*args, **kwargs):
    raise RuntimeError("boom")


def test_a_failure_while_answering_a_create_saves_nothing(reviewer_api, catalogue, monkeypatch):
    """The answer is built before the write commits: an error instead of the answer (a crash,
    or a worker killed for taking too long) means nothing was saved."""
    monkeypatch.setattr(rules, "summary_warnings", explode)
    reviewer_api.raise_request_exception = False

    response = reviewer_api.post(LIST_URL, example_payload(), format="json")

    assert response.status_code == 500
    assert not Summary.objects.exists()
    assert not Video.objects.exists()


def test_a_failure_while_answering_an_update_changes_nothing(reviewer_api, catalogue, monkeypatch):
    slug = demo_data.MAIN_VIDEO["slug"]
    tag = create_example(reviewer_api)["ETag"]
    monkeypatch.setattr(rules, "summary_warnings", explode)
    reviewer_api.raise_request_exception = False

    response = reviewer_api.patch(
        detail_url(slug), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag
    )

    assert response.status_code == 500
    assert Summary.objects.get(video__slug=slug).tldr == demo_data.MAIN_SUMMARY["tldr"]


def payload_with_links(count: int, slug: str) -> dict:
    """The example with one chapter of `count` links, for a video of its own."""
    links = " ".join(f"[source {i}](https://example.org/{slug}/{i})" for i in range(count))
    payload = example_payload()
    payload["video"].update(slug=slug, source_url=f"https://www.youtube.com/watch?v={slug}")
    payload.update(chapters=[{"title": "Links", "body": links}], caveats=[])
    return payload


def test_saving_work_grows_in_proportion_to_the_number_of_links(reviewer_api, catalogue):
    def save(count, slug):
        response = reviewer_api.post(LIST_URL, payload_with_links(count, slug), format="json")
        assert response.status_code == 201, response.json()

    few = calls_made(save, 100, "links00100")
    many = calls_made(save, 800, "links00800")

    # Eight times the links: less than eight times the work when linear (a request does a
    # fixed part too), far more when each link costs in proportion to the text.
    assert many < 8 * few, (few, many)


def test_a_save_converts_each_text_once(reviewer_api, catalogue, monkeypatch):
    """Rendering, link checks, citations, the search text and the answer's warnings all
    read each text, however many texts the summary has; each is converted once."""
    converted, sanitised = Counter(), Counter()
    convert, clean = markdown.Markdown.convert, nh3.clean

    def counted_convert(self, source):
        converted[source] += 1
        return convert(self, source)

    def counted_clean(fragment, **options):
        sanitised[fragment] += 1
        return clean(fragment, **options)

    monkeypatch.setattr(markdown.Markdown, "convert", counted_convert)
    monkeypatch.setattr(nh3, "clean", counted_clean)
    payload = payload_with_links(20, "converted1")
    tag = uuid.uuid4().hex
    payload["key_points"] = [
        {"title": f"Point {n}", "body": f"Point {n} {tag} [cited](https://example.org/{n})."}
        for n in range(80)
    ]

    response = reviewer_api.post(LIST_URL, payload, format="json")

    assert response.status_code == 201, response.json()
    assert len(converted) > 80
    assert max(converted.values()) == 1
    assert max(sanitised.values()) == 1


# --- Update -----------------------------------------------------------------------------


def test_patch_with_if_match_replaces_the_lists_it_sends(reviewer_api, catalogue, reviewer):
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    body = created.json()
    first, second = body["chapters"]
    payload = {
        "tldr": "Shorter.",
        # Swap the chapters, keep both rows, add a third; caveats follow the new order.
        "chapters": [
            {"id": second["id"], "title": second["title"], "body": second["body"]},
            {"id": first["id"], "title": "Renamed", "body": first["body"]},
            {"title": "New", "body": "A new chapter.", "start_time": 30},
        ],
        "caveats": [{"chapter": 1, "claim": "2.5 times faster", "text": "Still careful."}],
    }
    response = reviewer_api.patch(
        detail_url(slug), payload, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert response.status_code == 200, response.json()
    updated = response.json()
    assert updated["tldr"] == "Shorter."
    assert [(c["id"], c["title"]) for c in updated["chapters"]][:2] == [
        (second["id"], second["title"]),
        (first["id"], "Renamed"),
    ]
    assert [c["position"] for c in updated["chapters"]] == [1, 2, 3]
    assert updated["caveats"] == [
        {
            "id": updated["caveats"][0]["id"],
            "position": 1,
            "chapter": 1,
            "key_point": None,
            "takeaway": None,
            "claim": "2.5 times faster",
            "text": "Still careful.",
            "text_html": "Still careful.",
        }
    ]
    assert len(updated["key_points"]) == 3  # not sent: unchanged
    assert updated["lock_version"] == body["lock_version"] + 1
    assert response["ETag"] != created["ETag"]
    summary = Summary.objects.get(video__slug=slug)
    assert Version.objects.get_for_object(summary).count() == 2
    latest = Version.objects.get_for_object(summary).first().revision
    assert latest.user == reviewer
    chapter_titles = {
        v.field_dict["title"] for v in latest.version_set.all() if v.content_type.model == "chapter"
    }
    assert chapter_titles == {"Renamed", second["title"], "New"}


def test_put_replaces_everything(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    payload = example_payload()
    payload["key_points"] = []
    payload["caveats"] = []
    payload["video"]["topics"] = ["agents"]
    response = reviewer_api.put(
        detail_url(slug), payload, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert response.status_code == 200, response.json()
    assert response.json()["key_points"] == []
    assert [t["slug"] for t in response.json()["video"]["topics"]] == ["agents"]
    assert not KeyPoint.objects.exists()


def test_update_without_if_match_is_428_and_changes_nothing(reviewer_api, catalogue):
    create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    response = reviewer_api.patch(detail_url(slug), {"tldr": "Changed."}, format="json")
    assert response.status_code == 428
    assert response.json()["error"]["code"] == "precondition_required"
    assert Summary.objects.get().tldr == demo_data.MAIN_SUMMARY["tldr"]


def test_update_with_a_stale_etag_is_412_and_changes_nothing(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    first = reviewer_api.patch(
        detail_url(slug), {"tldr": "One."}, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert first.status_code == 200
    stale = reviewer_api.patch(
        detail_url(slug), {"tldr": "Two."}, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "precondition_failed"
    summary = Summary.objects.get()
    assert summary.tldr == "One."
    assert Version.objects.get_for_object(summary).count() == 2


def test_if_match_star_and_a_weak_copy_match(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    weak = reviewer_api.patch(
        detail_url(slug), {"tldr": "Weak."}, format="json", HTTP_IF_MATCH="W/" + created["ETag"]
    )
    assert weak.status_code == 200
    star = reviewer_api.patch(detail_url(slug), {"tldr": "Star."}, format="json", HTTP_IF_MATCH="*")
    assert star.status_code == 200


def test_the_etag_of_a_read_is_the_one_updates_expect(reviewer_api, catalogue):
    create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    read = reviewer_api.get(detail_url(slug))
    response = reviewer_api.patch(
        detail_url(slug), {"tldr": "Ok."}, format="json", HTTP_IF_MATCH=read["ETag"]
    )
    assert response.status_code == 200


def test_an_admin_edit_in_between_makes_the_etag_stale(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    summary = Summary.objects.get()
    summary.tldr = "Edited in the admin."
    summary.save()
    response = reviewer_api.patch(
        detail_url(summary.video.slug),
        {"tldr": "API"},
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert response.status_code == 412
    summary.refresh_from_db()
    assert summary.tldr == "Edited in the admin."


def test_invalid_update_is_atomic(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    payload = {
        "tldr": "Would change.",
        "key_points": [{"title": "New", "body": "x"}],
        "chapters": [{"title": "Only", "body": "x", "start_time": "99:00"}],
        "caveats": [],
    }
    response = reviewer_api.patch(
        detail_url(slug), payload, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert response.status_code == 400
    assert "chapters[0].start_time" in fields_of(response)
    summary = Summary.objects.get()
    assert summary.tldr == demo_data.MAIN_SUMMARY["tldr"]
    assert summary.lock_version == 1
    assert KeyPoint.objects.count() == 3 and Chapter.objects.count() == 2
    assert Caveat.objects.count() == 3


def test_replacing_chapters_without_their_caveats_is_refused(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    payload = {"chapters": [{"title": "Only", "body": "x"}]}
    response = reviewer_api.patch(
        detail_url(demo_data.MAIN_VIDEO["slug"]),
        payload,
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert response.status_code == 400
    assert "send the caveats too" in fields_of(response)["caveats"][0]


def test_item_ids_must_belong_to_the_summary(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    other = ChapterFactory()
    payload = {"chapters": [{"id": other.pk, "title": "Stolen", "body": "x"}], "caveats": []}
    response = reviewer_api.patch(
        detail_url(demo_data.MAIN_VIDEO["slug"]),
        payload,
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert "is not in this summary" in fields_of(response)["chapters[0].id"][0]
    other.refresh_from_db()
    assert other.title != "Stolen"


def test_the_video_slug_cannot_change(reviewer_api, catalogue):
    created = create_example(reviewer_api)
    response = reviewer_api.patch(
        detail_url(demo_data.MAIN_VIDEO["slug"]),
        {"video": {"slug": "other"}},
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert response.status_code == 400
    assert "cannot change" in fields_of(response)["video.slug"][0]


def test_update_of_an_unknown_summary_is_404(reviewer_api):
    response = reviewer_api.patch(
        detail_url("nope"), {"tldr": "x"}, format="json", HTTP_IF_MATCH="*"
    )
    assert response.status_code == 404


# --- Workflow ---------------------------------------------------------------------------


def test_publish_schedule_unpublish_and_review(reviewer_api, catalogue, reviewer):
    create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    summary = Summary.objects.get()
    anonymous = APIClient()

    review = act(reviewer_api, slug, "submit-for-review")
    assert review.status_code == 200 and review.json()["status"] == "review"

    tomorrow = timezone.now() + datetime.timedelta(days=1)
    scheduled = act(reviewer_api, slug, "publish", {"publish_at": tomorrow.isoformat()})
    assert scheduled.status_code == 200
    assert scheduled.json()["status"] == "published"
    assert anonymous.get(detail_url(slug)).status_code == 404

    live = act(reviewer_api, slug, "publish")
    assert live.status_code == 200
    assert anonymous.get(detail_url(slug)).status_code == 200

    down = act(reviewer_api, slug, "unpublish")
    assert down.status_code == 200 and down.json()["publish_at"] is None
    assert anonymous.get(detail_url(slug)).status_code == 404

    comments = [v.revision.get_comment() for v in Version.objects.get_for_object(summary)]
    assert comments[:4] == ["Unpublished", "Published", comments[2], "Sent for review"]
    assert comments[2].startswith("Scheduled for")
    assert all(v.revision.user == reviewer for v in Version.objects.get_for_object(summary))


def test_publish_needs_the_publish_permission(catalogue):
    summary = SummaryFactory()
    writer = EditorFactory()
    writer.groups.clear()
    from django.contrib.auth.models import Permission

    writer.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_summary", "change_summary"])
    )
    client = APIClient()
    client.force_authenticate(writer)
    slug = summary.video.slug
    assert act(client, slug, "publish").status_code == 403
    assert act(client, slug, "submit-for-review").status_code == 200
    summary.refresh_from_db()
    assert summary.status == "review"


def test_publishing_a_summary_without_its_text_is_a_field_error(reviewer_api):
    summary = SummaryFactory(tldr=" ")
    response = act(reviewer_api, summary.video.slug, "publish")
    assert response.status_code == 400
    assert "tldr" in fields_of(response)


def test_sending_a_published_summary_without_changes_to_review_is_refused(reviewer_api):
    summary = SummaryFactory(live=True)
    response = act(reviewer_api, summary.video.slug, "submit-for-review")
    assert response.status_code == 400
    assert "no unpublished changes to review" in fields_of(response)["status"][0]


@pytest.mark.parametrize(
    "action", ["publish", "unpublish", "submit-for-review", "send-back", "discard-changes"]
)
def test_every_workflow_action_needs_a_current_if_match(reviewer_api, action):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW)
    url = f"{detail_url(summary.video.slug)}{action}/"
    body = {"note": "Fix it."}
    assert reviewer_api.post(url, body, format="json").status_code == 428
    assert reviewer_api.post(url, body, format="json", HTTP_IF_MATCH='"stale"').status_code == 412
    summary.refresh_from_db()
    assert summary.status == Summary.Status.IN_REVIEW


def test_saving_queues_checks_and_recheck_queues_them_again(reviewer_api, catalogue):
    create_example(reviewer_api)
    # The save itself claimed both sources for a check (queued when the write commits).
    assert Source.objects.exclude(check_token="").count() == 2
    response = reviewer_api.post(f"{detail_url(demo_data.MAIN_VIDEO['slug'])}recheck-sources/")
    assert response.status_code == 202
    assert response.json() == {"sources": 2, "queued": 0}  # already under way
    Source.objects.update(check_token="", claimed_until=None)  # those checks finished
    response = reviewer_api.post(f"{detail_url(demo_data.MAIN_VIDEO['slug'])}recheck-sources/")
    assert response.json() == {"sources": 2, "queued": 2}


def test_session_authentication_enforces_csrf(catalogue, reviewer):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(reviewer)
    response = client.post(LIST_URL, example_payload(), format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    assert client.get(LIST_URL).status_code == 200


def test_the_example_round_trip_through_the_api_alone(reviewer_api, catalogue):
    """Create, update with If-Match, publish: then anyone reads it and its page is live."""
    created = create_example(reviewer_api)
    slug = demo_data.MAIN_VIDEO["slug"]
    payload = copy.deepcopy(example_payload())
    payload["tldr"] += " Revised."
    updated = reviewer_api.put(
        detail_url(slug), payload, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert updated.status_code == 200
    published = reviewer_api.post(f"{detail_url(slug)}publish/", HTTP_IF_MATCH=updated["ETag"])
    assert published.status_code == 200
    public = APIClient().get(detail_url(slug))
    assert public.status_code == 200
    assert public.json()["tldr"].endswith("Revised.")
    assert public["ETag"] == published["ETag"]
    assert APIClient().get(public.json()["html_url"]).status_code == 200
    assert Takeaway.objects.count() == 4


@pytest.mark.parametrize(
    "value",
    ["9999-12-31T23:59:59-20:00", "0001-01-01T00:00:00+20:00", "2026-13-01T00:00", "soon", 5],
)
def test_publish_times_out_of_range_are_400(reviewer_api, value):
    summary = SummaryFactory()
    response = act(reviewer_api, summary.video.slug, "publish", {"publish_at": value})
    assert response.status_code == 400
    assert "publish_at" in fields_of(response)


def test_publish_time_with_a_large_offset_is_stored_in_utc(reviewer_api):
    summary = SummaryFactory()
    response = act(
        reviewer_api, summary.video.slug, "publish", {"publish_at": "2030-01-01T00:00:00+20:00"}
    )
    assert response.status_code == 200
    summary.refresh_from_db()
    assert summary.publish_at == datetime.datetime(2029, 12, 31, 4, 0, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://example.com/a?b=c", True),
        ("http://93.184.216.34/page", True),
        ("https://[2606:2800:220:1:248:1893:25c8:1946]/", True),
        ("http://１２７.０.０.１/", False),
        ("http://wiki.internal/", False),
        ("http://127.0.0.1./", False),
        ("http://[::1]/", False),
        ("http://0/", False),
        ("https://example.com:99999/", False),
        ("javascript:alert(1)", False),
    ],
)
def test_citable_url_policy(url, allowed):
    from summaries.editing.rules import citable_url_problem

    assert (citable_url_problem(url) is None) is allowed, citable_url_problem(url)


# Queries of a create of a summary whose one chapter cites only new sources, by database
# (PostgreSQL locks rows that SQLite, which locks the whole database, does not, and returns
# what the sources' INSERT wrote, which SQLite reads again): the same for any number of
# links and of check batches, as long as SQLite takes the rows in one INSERT (bulk_create
# splits them past 999 parameters: about 50 sources). The answer reads no source back.
CREATE_QUERIES = {"sqlite": 97, "postgresql": 96}


@pytest.mark.parametrize("links", [20, 40])
def test_a_create_citing_new_sources_takes_a_fixed_number_of_queries(
    reviewer_api,
    catalogue,
    settings,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
    links,
):
    """The new sources are inserted claimed for their checks, in batches of
    FETCH_BATCH_SIZE queued on commit: no UPDATE per batch to claim them after."""
    settings.FETCH_BATCH_SIZE = 10
    warm = reviewer_api.post(LIST_URL, payload_with_links(3, "warm-up"), format="json")
    assert warm.status_code == 201, warm.json()
    slug = f"links{links}"

    with (
        django_capture_on_commit_callbacks() as callbacks,
        django_assert_num_queries(CREATE_QUERIES[connection.vendor]),
    ):
        response = reviewer_api.post(LIST_URL, payload_with_links(links, slug), format="json")

    assert response.status_code == 201, response.json()
    checks = check_source_batch.name
    batches = [c.args for c in callbacks if getattr(getattr(c, "task", None), "name", "") == checks]
    assert [len(ids) for ids, _ in batches] == [10] * (links // 10)
    sources = Source.objects.filter(citations__summary__video__slug=slug)
    assert sorted(pk for ids, _ in batches for pk in ids) == sorted(s.pk for s in sources)
    for ids, token in batches:
        assert {
            (s.check_token, s.claimed_until > timezone.now()) for s in sources.filter(pk__in=ids)
        } == {(token, True)}


def assert_answered_as_read(api, answer, url):
    """A write's answer is the representation a GET of `url` then gives (its warnings
    aside), with the same ETag and Last-Modified."""
    assert answer.status_code in (200, 201), answer.json()
    read = api.get(url)
    shown = answer.json()
    shown.pop("warnings")
    assert shown == read.json()
    assert (answer["ETag"], answer["Last-Modified"]) == (read["ETag"], read["Last-Modified"])


def test_the_citations_of_a_write_answer_are_those_a_get_reads(reviewer_api, catalogue):
    """Created, kept and rebuilt citations, in chapters, key points and takeaways, of new
    and of checked sources, with verdicts and confirmations: shown as written (not read
    back), exactly as a GET shows them, on a draft and on a published summary's changes."""
    slug = demo_data.MAIN_VIDEO["slug"]
    payload = example_payload()
    payload["takeaways"][0]["text"] += " [Shared](https://example.org/shared)"
    payload["key_points"][0]["body"] += " [Shared too](https://example.org/shared)"
    created = reviewer_api.post(LIST_URL, payload, format="json")
    assert_answered_as_read(reviewer_api, created, detail_url(slug))
    assert {c["key_point"] for c in created.json()["citations"]} > {None}

    checked = timezone.now() - datetime.timedelta(hours=1)
    Source.objects.filter(url="https://example.org/shared").update(
        state=Source.State.REDIRECTED,
        status_code=200,
        final_url="https://example.org/moved",
        title="Moved",
        redirect_chain=[["https://example.org/shared", 301]],
        response_ms=120,
        last_checked_at=checked,
    )
    Citation.objects.filter(summary__video__slug=slug, link_text="Shared").update(
        verdict=Citation.Verdict.SUPPORTED,
        verdict_excerpt="x",
        verdict_checked_at=checked,
        confirmed_at=checked,
    )
    chapters = created.json()["chapters"]
    sent = [{"id": c["id"], "title": c["title"], "body": c["body"]} for c in chapters]
    sent[0]["body"] = "New [link](https://example.org/new) first. " + sent[0]["body"]
    patched = reviewer_api.patch(
        detail_url(slug), {"chapters": sent}, format="json", HTTP_IF_MATCH=created["ETag"]
    )
    assert_answered_as_read(reviewer_api, patched, detail_url(slug))

    act(reviewer_api, slug, "publish")  # the next write goes to the summary's unpublished changes
    sent[1]["body"] += " [Another](https://example.org/another)"
    rewritten = [{"title": c["title"], "body": c["body"]} for c in sent[::-1]]
    changed = reviewer_api.patch(
        detail_url(slug),
        {"chapters": rewritten, "caveats": []},
        format="json",
        HTTP_IF_MATCH=current_tag(reviewer_api, slug),
    )
    assert changed.json()["url"].endswith("/working-copy/")
    assert_answered_as_read(reviewer_api, changed, f"{detail_url(slug)}working-copy/")
