"""The Receipts panel shows the span a new transcript proposes for a pin, with a button to
pin there and one to keep the pin where it is (summaries/admin/receipts/)."""

import pytest

from summaries.editing import pinning

from . import test_admin_receipts
from .clients import logged_in
from .receipts_factories import SPEECH, fresh, pin_best, vtt
from .test_admin_receipts import change_url, page, panel, pin_url, point

pytestmark = pytest.mark.django_db

draft = test_admin_receipts.draft  # a fixture

# The talk with a greeting before it: every word five words on, half a second later.
SHIFTED = [
    (0, 0.5, "Hello and welcome everyone here."),
    *[(a + 0.5, b + 0.5, t) for a, b, t in SPEECH],
]


def shifted(summary, editor):
    price = point(summary, "Price")
    pin_best(summary, price)
    pinning.import_transcript(
        video=summary.video, data=vtt(SHIFTED), user=editor, filename="shifted.vtt"
    )
    return fresh(price)


def test_the_panel_shows_a_proposal_and_pins_there(editor, draft):
    price = shifted(draft, editor)
    proposal = price.pin["proposal"]
    client = logged_in(editor)

    shown = page(client.get(change_url(draft)))
    assert "The new transcript no longer says these words here" in shown
    assert f'value="take_proposal pin-keypoint-{price.pk}"' in shown

    response = client.post(pin_url(draft), panel("take_proposal", price))

    assert response.status_code == 302
    assert (fresh(price).pin["first"], fresh(price).pin["proposal"]) == (proposal["first"], None)


def test_the_panel_keeps_a_pin_where_it_is(editor, draft):
    price = shifted(draft, editor)
    first = price.pin["first"]
    client = logged_in(editor)

    response = client.post(pin_url(draft), panel("keep_pin", price))

    assert response.status_code == 302
    assert (fresh(price).pin["first"], fresh(price).pin["proposal"]) == (first, None)
    assert f"take_proposal pin-keypoint-{price.pk}" not in page(client.get(change_url(draft)))
