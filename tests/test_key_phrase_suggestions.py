"""Key-phrase suggestions for citations without one: the claim's words, offered in the
admin with a one-click accept and in the API as `suggested_key_phrase`."""

import random
import re

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.editing import derived
from summaries.models import Citation
from summaries.text import citations
from summaries.text.citations import suggest_key_phrase

from .admin_forms import form_fields
from .factories import ChapterFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db

NO_FIGURE = "The new model [tops the coding leaderboard](https://example.org/board) this week."
WITH_FIGURE = "It is [2.5 times faster](https://example.org/fast) than before."


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (
            "Anthropic says that this mode generates output 2.5 times faster than regular "
            "Opus 4.6.",
            "mode generates output 2.5 times faster than regular",
        ),
        (
            "According to OpenAI, the model reached a new record on SWE-bench Verified.",
            "model reached a new record on SWE-bench Verified",
        ),
        (
            "The new model tops the coding leaderboard this week.",
            "new model tops the coding leaderboard this week",
        ),
        ("See this.", ""),
        ("", ""),
    ],
)
def test_the_suggestion_is_the_claims_words(claim, expected):
    assert suggest_key_phrase(claim) == expected


@pytest.fixture
def summary():
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body=f"{NO_FIGURE}\n\n{WITH_FIGURE}")
    derived.sync_citations(summary=summary)
    return summary


# The rule as one regex: everything up to the first attribution. Slow on long claims (it
# tries every verb at every character), so suggest_key_phrase looks for it another way.
ATTRIBUTION_PREFIX = re.compile(
    rf"^.*?(?:(?:{citations._ATTRIBUTION_VERBS})(?:\s+that)?|according\s+to\s+[^,]+,)\s+",
    re.IGNORECASE,
)
PIECES = [
    *("says", "SAID", "Reports", "stated", "statells", "tells", "notes", "cites", "shows"),
    *("that", " that", "according", " to ", "According To", ",", " ", "puts it", "put"),
    *("essays", "listing", "excited", "foundation", "ſays", "İt", "ı", "\u212aeeps", "“", "x"),
]


def random_claims(count: int) -> list[str]:
    rng = random.Random(3)
    words = (rng.randint(1, 4) for _ in range(count))
    return [
        " ".join("".join(rng.choices(PIECES, k=rng.randint(1, 3))) for _ in range(n)) for n in words
    ]


def test_the_attribution_left_out_is_everything_up_to_the_first_one():
    for claim in random_claims(5_000):
        text = " ".join(claim.split())
        expected = ATTRIBUTION_PREFIX.match(text)
        found = citations._first_attribution(text)
        assert (found and found.end()) == (expected and expected.end()), text


def test_the_admin_offers_the_suggestion_and_accepts_it_in_one_click(client, summary):
    client.force_login(ReviewerFactory())
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    bare = summary.citations.get(key_phrase="")
    response = client.get(url)
    content = response.content.decode()
    assert "Suggested key phrase: “new model tops the coding leaderboard this week”" in content
    assert f'name="_accept_key_phrase" value="{bare.pk}"' in content
    assert content.count('name="_accept_key_phrase"') == 1  # not for the one with a phrase
    data = form_fields(response)
    data["_accept_key_phrase"] = str(bare.pk)
    response = client.post(url, data)
    assert response.status_code == 302
    assert response["Location"].endswith(url)  # stays on the page
    bare.refresh_from_db()
    assert bare.key_phrase == "new model tops the coding leaderboard this week"
    assert bare.key_phrase_edited


def test_the_api_gives_a_suggestion_for_each_citation_without_a_phrase(summary):
    editor = ReviewerFactory()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=editor).key}")
    url = f"/api/v1/summaries/{summary.video.slug}/"
    response = api.get(url, {"expand": "citations"})
    citations = {c["link_text"]: c for c in response.json()["citations"]}
    bare = citations["tops the coding leaderboard"]
    assert bare["key_phrase"] == ""
    assert bare["suggested_key_phrase"] == "new model tops the coding leaderboard this week"
    assert citations["2.5 times faster"]["suggested_key_phrase"] == ""
    # Accepting it is an ordinary key phrase write.
    response = api.patch(
        f"{url}citations/{bare['id']}/",
        {"key_phrase": bare["suggested_key_phrase"]},
        format="json",
        HTTP_IF_MATCH=response["ETag"],
    )
    assert response.status_code == 200, response.json()
    assert Citation.objects.get(pk=bare["id"]).key_phrase == bare["suggested_key_phrase"]
