"""/api/v1/: one router for every endpoint; anything else under it is a JSON 404."""

from django.urls import re_path
from rest_framework.routers import SimpleRouter

from . import views
from .chapter_suggestions import ChapterSuggestionViewSet
from .corrections import CorrectionViewSet
from .errors import not_found
from .following import BounceViewSet
from .pins import PinViewSet
from .summary_views import SummaryViewSet
from .transcripts import TranscriptViewSet
from .versions import VersionViewSet
from .webhooks import WebhookEndpointViewSet

app_name = "api"

router = SimpleRouter()
router.register("channels", views.ChannelViewSet, basename="channel")
router.register("people", views.PersonViewSet, basename="person")
router.register("topics", views.TopicViewSet, basename="topic")
router.register("organisations", views.OrganisationViewSet, basename="organisation")
router.register("videos", views.VideoViewSet, basename="video")
router.register("summaries", SummaryViewSet, basename="summary")
router.register("webhooks", WebhookEndpointViewSet, basename="webhook")
router.register("follow-bounces", BounceViewSet, basename="follow-bounce")
# Receipts: /videos/<slug>/transcript/ and /summaries/<slug>/<kind>/<id>/pin/….
router.register("videos", TranscriptViewSet, basename="video-transcript")
router.register("summaries", PinViewSet, basename="summary-pin")
# Suggested chapters: /summaries/<slug>/chapter-suggestions/.
router.register("summaries", ChapterSuggestionViewSet, basename="summary-chapter-suggestions")
# Updates and corrections: /summaries/<slug>/corrections/ and …/corrections/<id>/withdraw/.
router.register("summaries", CorrectionViewSet, basename="summary-corrections")
# Published versions (Memento): /summaries/<slug>/versions/.
router.register("summaries", VersionViewSet, basename="summary-versions")

# Any other path (also one with characters a slug cannot have) is a JSON 404.
urlpatterns = [*router.urls, re_path(r"^", not_found)]
