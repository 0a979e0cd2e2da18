"""Which reads go to the read replica (curation/replica.py): anonymous API reads only, and
never after the request wrote."""

import pytest
from django.db import transaction
from django.test import RequestFactory

from curation.replica import PRIMARY, REPLICA, ReplicaMiddleware, ReplicaRouter
from summaries.models import Summary

router = ReplicaRouter()


def read_target(request) -> list[str]:
    """Where the request's reads go: before a write, inside a transaction, after a write."""
    seen = []

    def view(request):
        seen.append(router.db_for_read(Summary))
        with transaction.atomic():
            seen.append(router.db_for_read(Summary))
        router.db_for_write(Summary)
        seen.append(router.db_for_read(Summary))
        return None

    ReplicaMiddleware(view)(request)
    return seen


@pytest.mark.django_db(transaction=True)  # no test transaction around the "request"
def test_anonymous_api_reads_use_the_replica_until_the_request_writes():
    request = RequestFactory().get("/api/v1/summaries/")
    assert read_target(request) == [REPLICA, PRIMARY, PRIMARY]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("get", "/api/v1/summaries/", {"HTTP_AUTHORIZATION": "Token abc"}),
        ("post", "/api/v1/summaries/", {}),
        ("get", "/videos/some-video/", {}),  # reader pages: the page cache keeps them
        ("get", "/admin/", {}),
    ],
)
def test_everything_else_reads_the_primary(method, path, headers):
    request = getattr(RequestFactory(), method)(path, **headers)
    assert read_target(request) == [PRIMARY, PRIMARY, PRIMARY]


@pytest.mark.django_db
def test_a_signed_in_reader_with_a_session_reads_the_primary():
    request = RequestFactory().get("/api/v1/summaries/")
    request.COOKIES["sessionid"] = "x"
    assert read_target(request) == [PRIMARY, PRIMARY, PRIMARY]


def test_outside_a_request_every_read_is_on_the_primary():
    """Celery tasks and commands never read a replica."""
    assert router.db_for_read(Summary) == PRIMARY


def test_migrations_run_on_the_primary_only():
    assert router.allow_migrate(PRIMARY, "summaries")
    assert not router.allow_migrate(REPLICA, "summaries")
