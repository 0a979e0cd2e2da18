"""Schemathesis fuzzes every API operation in-process, as an anonymous client and as an
editor: no 5xx response, and every response matches the schema and its content type."""

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import RequestFactory
from django.urls import resolve
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from curation.wsgi import application
from summaries.editing import derived
from tests.factories import (
    AppearanceFactory,
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
# Bounded so that the whole run (20 operations, two clients) takes a minute or two; raise it
# for a deeper local run (SCHEMATHESIS_MAX_EXAMPLES=500).
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))


@pytest.fixture
def keep_test_connection():
    """Django closes "old" connections around each request; in a test that would close the
    test transaction's connection (PostgreSQL then answers "connection is closed")."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def content(db):
    """A live summary with every part, a draft and a scheduled one to find (or not)."""
    live = SummaryFactory(live=True, video__slug="live-summary")
    AppearanceFactory(video=live.video)
    live.video.topics.add(TopicFactory(slug="topic"))
    KeyPointFactory(summary=live)
    TakeawayFactory(summary=live)
    ChapterFactory(summary=live, body="[A source](https://example.org/) says 3 times more.")
    derived.refresh_derived_data(summary=live)
    SummaryFactory(video__slug="draft-summary")
    return live


@pytest.fixture
def editor_token(db):
    return Token.objects.create(user=EditorFactory()).key


@pytest.fixture
def unthrottled(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "1000000/minute", "user": "1000000/minute"},
    }


SCHEMA_PATH = "/api/schema/"


def load_schema() -> schemathesis.schemas.BaseSchema:
    """The schema the site serves, loaded when the module is collected, where no test may
    use the database: from the schema view itself, not through the middleware (the page
    cache reads the content generation from the database for any anonymous GET)."""
    view = resolve(SCHEMA_PATH).func
    response = view(RequestFactory().get(SCHEMA_PATH, {"format": "json"}))
    response.render()
    loaded = schemathesis.openapi.from_dict(json.loads(response.content))
    # The site's WSGI application, as servers run it: static files and cached reads are
    # answered before Django's handler (curation/wsgi.py).
    loaded.app = application
    loaded.location = SCHEMA_PATH
    return loaded


schema = load_schema()


@pytest.mark.usefixtures("content", "keep_test_connection", "unthrottled")
@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_schema(case, editor_token):
    # Anonymous reads may come gzipped from the page cache (Content-Encoding: gzip), which
    # the WSGI transport does not decode, unlike HTTP clients: ask for them plain.
    case.call_and_validate(headers={"Accept-Encoding": "identity"}, checks=CHECKS)
    case.call_and_validate(headers={"Authorization": f"Token {editor_token}"}, checks=CHECKS)
