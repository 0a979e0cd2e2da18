"""The shared fixtures (tests/conftest.py) are who their names say: an editor writes but
does not publish, a reviewer publishes, and their clients are signed in as them."""

import pytest
from django.contrib.auth import get_user_model

from summaries.editing import gate
from tests.factories import EDITORS, REVIEWERS_MIGRATION

REVIEWERS = REVIEWERS_MIGRATION.REVIEWERS

pytestmark = pytest.mark.django_db


def test_the_editor_may_write_but_not_publish(editor):
    assert editor.groups.filter(name=EDITORS).exists()
    assert not editor.groups.filter(name=REVIEWERS).exists()
    assert gate.may(editor, gate.CHANGE)
    assert gate.may(editor, gate.ADD)
    assert not gate.may_publish(editor)


def test_the_reviewer_may_publish(reviewer):
    assert reviewer.groups.filter(name=REVIEWERS).exists()
    assert gate.may(reviewer, gate.CHANGE)
    assert gate.may_publish(reviewer)


def test_editor_and_reviewer_are_two_users(editor, reviewer):
    assert editor.pk != reviewer.pk
    assert get_user_model().objects.filter(pk__in=[editor.pk, reviewer.pk]).count() == 2


@pytest.mark.parametrize(
    ("client_name", "user_name"),
    [
        ("editor_client", "editor"),
        ("reviewer_client", "reviewer"),
    ],
)
def test_the_clients_are_signed_in_as_their_user(request, client_name, user_name):
    client = request.getfixturevalue(client_name)
    user = request.getfixturevalue(user_name)
    response = client.get("/admin/")
    assert response.status_code == 200
    assert response.wsgi_request.user == user


@pytest.mark.parametrize(
    ("client_name", "user_name"),
    [
        ("editor_api", "editor"),
        ("reviewer_api", "reviewer"),
    ],
)
def test_the_api_clients_send_their_users_token(request, client_name, user_name):
    client = request.getfixturevalue(client_name)
    user = request.getfixturevalue(user_name)
    response = client.get("/api/v1/summaries/")
    assert response.status_code == 200
    assert response.wsgi_request.user == user
    assert response.wsgi_request.auth.user == user


def test_an_anonymous_client_is_not_signed_in(client):
    assert not client.get("/admin/").wsgi_request.user.is_authenticated
