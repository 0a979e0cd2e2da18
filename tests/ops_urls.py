"""A test-only URLconf (tests/test_ops.py): views that raise what a test put in RAISE.

A reader page and an API view, so that the 503 for an unreachable database can be checked
in both shapes with the exceptions Django really raises, without making a real view fail.
"""

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from summaries.api.conditional import ConditionalResponseMixin

# The exception the views raise; set by the test.
RAISE: list[BaseException] = []


def reader_page(request):
    raise RAISE[0]


class ApiView(ConditionalResponseMixin, APIView):
    """An API view as the API's own are: their cache headers, the project's handler."""

    permission_classes = []
    authentication_classes = []

    def get(self, request):
        if not RAISE:
            return Response({"ok": True})
        raise RAISE[0]


urlpatterns = [
    path("page/", reader_page),
    path("api/v1/thing/", ApiView.as_view()),
]
