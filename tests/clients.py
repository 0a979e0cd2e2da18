"""Clients signed in as a given user, as the tests' fixtures make them (tests/conftest.py)."""

from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def logged_in(user) -> Client:
    """A test client whose session is signed in as `user` (the admin, the site)."""
    client = Client()
    client.force_login(user)
    return client


def token_client(user) -> APIClient:
    """An API client sending `user`'s token, as a client of the API does (none: anonymous)."""
    client = APIClient()
    if user is not None:
        token, _made = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
