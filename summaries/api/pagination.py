"""Cursor pagination: stable while content is added, with cursors checked before use."""

import datetime
from base64 import b64encode
from urllib import parse

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.crypto import salted_hmac
from rest_framework import pagination
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.utils.urls import replace_query_param

from summaries.reader.absolute import site_url

from .filters import to_utc

MAX_POSITION_CHARS = 500
COUNT_PARAM = "count"
CURSOR_SALT = "summaries.api.pagination.cursor"


class CursorPagination(pagination.CursorPagination):
    """REST framework's cursor pagination, answering 400 (not 404 or 500) to a bad cursor.

    A cursor carries the ordering field's value of the last item seen; a forged one could
    hold any text, which the database would be asked to compare with a date. The value is
    therefore parsed with the ordering field before the query runs.
    """

    page_size_query_param = "page_size"
    ordering = ("-created_at", "-pk")
    # The request's cursor when it is exactly one this site wrote (signed, in the links it
    # gives); None otherwise. The page cache keeps only pages such cursors ask for: a made-up
    # position would be a new entry each time (summaries/api/conditional.py).
    issued_cursor: str | None = None

    @property
    def max_page_size(self):
        return settings.API_MAX_PAGE_SIZE

    def get_page_size(self, request):
        """The page size asked for: a whole number from 1 (above the maximum: the maximum);
        anything else is a 400 naming `page_size`, not quietly the default."""
        value = request.query_params.get(self.page_size_query_param)
        if not value:  # absent, or sent empty by a form: the default
            return self.page_size
        if not value.isdigit() or int(value) < 1:
            raise ValidationError(
                {self.page_size_query_param: ["A whole number of 1 or more is required."]}
            )
        return min(int(value), self.max_page_size)

    def paginate_queryset(self, queryset, request, view=None):
        self._queryset = queryset
        self._count_asked = self._wants_count(request)
        page: list | None = super().paginate_queryset(queryset, request, view)
        # The next and previous links on SITE_URL, not the request's Host (links.py).
        self.base_url = site_url(request.get_full_path())
        return page

    def _wants_count(self, request) -> bool:
        value = request.query_params.get(COUNT_PARAM, "")
        if value not in ("", "true", "false"):
            raise ValidationError({COUNT_PARAM: ["Send true or false."]})
        return value == "true"

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        if self._count_asked:  # one COUNT query, only when asked: lists can be long
            response.data = {"count": self._queryset.count(), **response.data}
        return response

    def get_paginated_response_schema(self, schema):
        paginated = super().get_paginated_response_schema(schema)
        paginated["properties"] = {
            "count": {
                "type": "integer",
                "description": "With ?count=true only: how many items all the pages hold.",
            },
            **paginated["properties"],
        }
        return paginated

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        parameters.append(
            {
                "name": COUNT_PARAM,
                "required": False,
                "in": "query",
                "description": "true: add `count`, the number of items on all pages.",
                "schema": {"type": "boolean"},
            }
        )
        return parameters

    def encode_cursor(self, cursor):
        url = self.base_url or ""  # set by paginate_queryset, before any link is written
        return replace_query_param(url, self.cursor_query_param, self._written(cursor))

    def _written(self, cursor) -> str:
        """The cursor as this site writes it: REST framework's tokens and `s`, their
        signature (which only says the site wrote it; reading a cursor does not need it)."""
        tokens = {}
        if cursor.offset != 0:
            tokens["o"] = str(cursor.offset)
        if cursor.reverse:
            tokens["r"] = "1"
        if cursor.position is not None:
            tokens["p"] = cursor.position
        tokens["s"] = salted_hmac(CURSOR_SALT, parse.urlencode(tokens)).hexdigest()[:16]
        return b64encode(parse.urlencode(tokens).encode("ascii")).decode("ascii")

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({self.cursor_query_param: ["Invalid cursor."]}) from None
        if cursor is not None:
            given = request.query_params.get(self.cursor_query_param)
            self.issued_cursor = given if given == self._written(cursor) else None
        if cursor is not None and cursor.position is not None:
            cursor = cursor._replace(position=self._checked_position(cursor.position))
        return cursor

    def _checked_position(self, position: str) -> str:
        """The position as the database may compare it (times in UTC), or a 400."""
        invalid = ValidationError({self.cursor_query_param: ["Invalid cursor."]})
        if len(position) > MAX_POSITION_CHARS or "\x00" in position:
            raise invalid
        name = self.ordering[0].lstrip("-")
        query = self._queryset.query
        if name in query.annotations:
            field = query.annotations[name].output_field
        else:
            try:
                field = self._queryset.model._meta.get_field(name)
            except FieldDoesNotExist:
                raise invalid from None
        try:
            value = field.to_python(position)
        except (DjangoValidationError, ValueError, TypeError, OverflowError):
            raise invalid from None
        if value is None:
            raise invalid
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=datetime.UTC)
            try:
                return str(to_utc(value))
            except ValueError:
                raise invalid from None
        return position
