"""Caveats on key points: the model's one-target rule, the API's `key_point` position, the
reader page, working copies and restores; and in the admin, caveats on parts added in the
same save."""

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from reversion.models import Version

from summaries.editing import copies, restore, save
from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway

from . import test_api_write
from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)
from .test_api_write import LIST_URL, detail_url, example_payload

# The API tests' fixture: the example's catalogue.
catalogue = test_api_write.catalogue

pytestmark = pytest.mark.django_db


def test_a_caveat_qualifies_at_most_one_part():
    summary = SummaryFactory()
    point = KeyPointFactory(summary=summary)
    chapter = ChapterFactory(summary=summary)
    Caveat.objects.create(summary=summary, key_point=point, position=1, text="Fine.")
    with pytest.raises(IntegrityError), transaction.atomic():
        Caveat.objects.create(
            summary=summary, key_point=point, chapter=chapter, position=2, text="Two targets."
        )


def test_the_api_attaches_a_caveat_to_a_key_point_by_position(reviewer_api, catalogue):
    payload = example_payload()
    payload["caveats"] = [{"key_point": 2, "claim": "", "text": "Only one run."}]
    response = reviewer_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 201, response.json()
    (caveat,) = response.json()["caveats"]
    assert (caveat["key_point"], caveat["chapter"], caveat["takeaway"]) == (2, None, None)
    stored = Caveat.objects.get()
    assert stored.key_point.position == 2


def test_the_api_refuses_a_missing_key_point_and_two_targets(reviewer_api, catalogue):
    payload = example_payload()
    count = len(payload["key_points"])
    payload["caveats"] = [
        {"key_point": count + 1, "text": "Nowhere."},
        {"key_point": 1, "chapter": 1, "text": "Both."},
    ]
    response = reviewer_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert f"There is no key point {count + 1}." in fields["caveats[0].key_point"]
    assert "caveats[1]" in fields


def test_replacing_key_points_keeps_their_caveats_only_when_sent(reviewer_api, catalogue):
    payload = example_payload()
    payload["caveats"] = [{"key_point": 1, "text": "On the first point."}]
    slug = reviewer_api.post(LIST_URL, payload, format="json").json()["video"]["slug"]
    detail = reviewer_api.get(detail_url(slug))
    response = reviewer_api.patch(
        detail_url(slug),
        {"key_points": [{"title": "Only", "body": "New."}]},
        format="json",
        HTTP_IF_MATCH=detail["ETag"],
    )
    assert response.status_code == 400
    assert "caveats" in response.json()["error"]["fields"]


def test_the_reader_sees_a_key_points_caveat_beside_it(client):
    summary = SummaryFactory(live=True)
    point = KeyPointFactory(summary=summary, title="Fast mode", body="It is faster.")
    KeyPointFactory(summary=summary, title="Other point", body="Other.")
    Caveat.objects.create(summary=summary, key_point=point, position=1, text="Measured once.")
    content = client.get(summary.get_absolute_url()).content.decode()
    item = content.split('<h3 class="point-title">Fast mode</h3>')[1].split("</li>")[0]
    assert "Measured once." in item
    assert content.count("Measured once.") == 1


def test_a_working_copy_maps_a_key_points_caveat():
    live = SummaryFactory(live=True)
    point = KeyPointFactory(summary=live, title="Point")
    Caveat.objects.create(summary=live, key_point=point, position=1, text="Careful.")
    copy, _ = copies.start_working_copy(summary=live)
    caveat = copy.caveats.get()
    assert caveat.key_point.summary == copy and caveat.key_point.title == "Point"


def test_restoring_a_revision_keeps_a_key_points_caveat():
    summary = SummaryFactory()
    point = KeyPoint(title="Point", body="Body.")
    caveat = Caveat(text="Careful.", key_point=point)
    save.save_summary(summary=summary, parts={KeyPoint: [point], Caveat: [caveat]}, user=None)
    first = Version.objects.get_for_object(summary).first()
    save.save_summary(summary=summary, parts={Caveat: []}, user=None)
    assert not summary.caveats.exists()
    restore.restore_revision(summary=summary, version=first, user=ReviewerFactory())
    restored = summary.caveats.get()
    assert restored.key_point.title == "Point"


# --- The admin -----------------------------------------------------------------------------


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def open_form(client, summary):
    return form_fields(client.get(change_url(summary)))


def test_the_caveat_target_lists_key_points_and_the_new_rows(reviewer_client):
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, title="Saved point", position=1)
    content = reviewer_client.get(change_url(summary)).content.decode()
    target = content.split('name="caveats-0-target"')[1].split("</select>")[0]
    assert "Key point 1: Saved point" in target
    assert 'value="new:chapters:0"' in target  # the empty chapter row of the page
    assert 'value="new:key_points:1"' in target


@pytest.mark.parametrize(
    ("target", "model", "fields"),
    [
        ("chapters", Chapter, {"title": "New chapter", "body": "Text."}),
        ("key_points", KeyPoint, {"title": "New point", "body": "Text."}),
        ("takeaways", Takeaway, {"text": "New takeaway."}),
    ],
)
def test_a_caveat_is_attached_to_a_part_added_in_the_same_save(
    reviewer_client, target, model, fields
):
    summary = SummaryFactory()
    data = open_form(reviewer_client, summary)
    index = int(data[f"{target}-INITIAL_FORMS"])
    data.update({f"{target}-{index}-{name}": value for name, value in fields.items()})
    data["caveats-0-text"] = "Qualifies the new part."
    data["caveats-0-target"] = f"new:{target}:{index}"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    caveat = summary.caveats.get()
    part = model.objects.get(summary=summary)
    assert getattr(caveat, f"{model._meta.model_name.replace('keypoint', 'key_point')}") == part


def test_a_caveat_on_an_existing_key_point_is_saved_and_shown_again(reviewer_client):
    summary = SummaryFactory()
    point = KeyPointFactory(summary=summary, title="Saved point")
    TakeawayFactory(summary=summary)
    data = open_form(reviewer_client, summary)
    data["caveats-0-text"] = "On the point."
    data["caveats-0-target"] = f"key_point:{point.pk}"
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    assert summary.caveats.get().key_point == point
    data = open_form(reviewer_client, summary)
    assert data["caveats-0-target"] == f"key_point:{point.pk}"
    data["caveats-0-target"] = ""
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    caveat = summary.caveats.get()
    assert (caveat.key_point, caveat.chapter, caveat.takeaway) == (None, None, None)


def test_a_target_of_another_summary_is_refused(reviewer_client):
    summary = SummaryFactory()
    other = KeyPointFactory(summary=SummaryFactory())
    data = open_form(reviewer_client, summary)
    data["caveats-0-text"] = "Elsewhere."
    data["caveats-0-target"] = f"key_point:{other.pk}"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    assert not Summary.objects.get(pk=summary.pk).caveats.exists()


def test_an_empty_new_target_row_leaves_the_caveat_on_the_summary(reviewer_client):
    summary = SummaryFactory()
    data = open_form(reviewer_client, summary)
    data["caveats-0-text"] = "Its chapter row stayed empty."
    data["caveats-0-target"] = "new:chapters:0"
    response = reviewer_client.post(change_url(summary), data, follow=True)
    assert response.status_code == 200
    caveat = summary.caveats.get()
    assert caveat.chapter is None
    assert any("stayed empty" in str(m) for m in response.context["messages"])


def test_editing_a_live_summarys_caveat_target_maps_it_onto_the_changes(reviewer_client):
    live = SummaryFactory(live=True)
    point = KeyPointFactory(summary=live, title="Live point", position=1)
    caveat = Caveat.objects.create(summary=live, key_point=point, position=1, text="Careful.")
    data = open_form(reviewer_client, live)
    assert data["caveats-0-target"] == f"key_point:{point.pk}"
    data["caveats-0-text"] = "More careful."
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    copy = Summary.objects.get(working_copy_of=live)
    changed = copy.caveats.get()
    assert changed.text == "More careful." and changed.key_point.summary == copy
    caveat.refresh_from_db()
    assert caveat.text == "Careful." and caveat.key_point == point
