"""One JSON shape for every API error: {"error": {"status", "code", "message", "fields"}}.

`fields` maps the path of each invalid input (`video.duration`, `chapters[2].title`) to its
messages; it is empty for errors that are not about the input. A publication the publish
gate refuses also lists `problems`: each statement's part (`kind`, `id`, `quote`) and
`message`, under the list the part is in (`fields["key_points"]`).
"""

import logging

from django.conf import settings
from django.core.exceptions import (
    DisallowedHost,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.signals import got_request_exception
from django.db import IntegrityError
from django.http import Http404, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.settings import api_settings
from rest_framework.views import set_rollback

from summaries.editing.receipts import PublicationRefused
from summaries.models import EditConflict
from summaries.ops.outage import RETRY_AFTER, is_outage, log_outage

logger = logging.getLogger("django.request")


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, limit: int):
        super().__init__(f"The request body is larger than {limit} bytes.")


class BadRequest(exceptions.APIException):
    """A request Django refuses as suspicious (too many fields, a bad Host, …)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The request is malformed."
    default_code = "bad_request"


class PreconditionRequired(exceptions.APIException):
    status_code = status.HTTP_428_PRECONDITION_REQUIRED
    default_detail = (
        "Send If-Match with the ETag of the version you edited (GET the summary to get it)."
    )
    default_code = "precondition_required"


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = (
        "The summary changed since you read it (If-Match does not match its ETag). "
        "Nothing was saved: GET it again and reapply your edit."
    )
    default_code = "precondition_failed"


class ServiceUnavailable(exceptions.APIException):
    """The database or Redis cannot be reached (summaries/ops/outage.py)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service is unavailable for a moment; try again shortly."
    default_code = "unavailable"
    wait = RETRY_AFTER  # sent as Retry-After


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "A concurrent change conflicts with this request; nothing was saved."
    default_code = "conflict"


def flatten_fields(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as {"a.b[2].c": [messages]}."""
    fields: dict[str, list[str]] = {}

    def walk(item, path):
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, int):
                    walk(value, f"{path}[{key}]")
                elif key == api_settings.NON_FIELD_ERRORS_KEY:
                    walk(value, path or key)
                else:
                    walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(item, list):
            if all(not isinstance(value, dict | list) for value in item):
                if item:
                    fields.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).extend(
                        str(value) for value in item
                    )
                return
            for index, value in enumerate(item):
                walk(value, f"{path}[{index}]")
        else:
            fields.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).append(str(item))

    walk(detail, prefix)
    return fields


def error_body(status_code: int, code: str, message: str, fields=None) -> dict:
    return {
        "error": {
            "status": status_code,
            "code": code,
            "message": message,
            "fields": fields or {},
        }
    }


def _validation_message(fields: dict[str, list[str]]) -> str:
    if len(fields) == 1:
        (name, messages), *_ = fields.items()
        return f"{name}: {' '.join(messages)}"
    return "Invalid input: " + ", ".join(fields) + "."


def _suspicious(exc: SuspiciousOperation) -> exceptions.APIException:
    """The API error for what Django refuses as suspicious; the request is never echoed.

    Logged to django.security.<name> as Django's own handler does for reader pages.
    """
    logging.getLogger(f"django.security.{type(exc).__name__}").warning(str(exc))
    if isinstance(exc, RequestDataTooBig):
        return PayloadTooLarge(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return BadRequest(
            f"Too many query or form parameters: at most {limit}.", code="too_many_parameters"
        )
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return BadRequest(f"Too many files: at most {limit}.", code="too_many_files")
    return BadRequest()


def _as_api_exception(exc):
    if isinstance(exc, SuspiciousOperation):
        return _suspicious(exc)
    if isinstance(exc, Http404):
        return exceptions.NotFound()
    if isinstance(exc, DjangoPermissionDenied):
        return exceptions.PermissionDenied()
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(detail=as_serializer_error(exc))
    if isinstance(exc, EditConflict):
        return PreconditionFailed()
    if isinstance(exc, IntegrityError):
        # A unique row written by a concurrent request (same video, same slug).
        return Conflict()
    return exc


def exception_handler(exc, context):
    """REST framework's exception handler, in this API's one error shape.

    Anything that is not an API error is logged like Django logs a server error (and
    reported through got_request_exception) and answered with a JSON 500.
    """
    request = context.get("request")
    if is_outage(exc):
        log_outage(exc, getattr(request, "path", "?"))
        exc = ServiceUnavailable()
    refused = exc  # the publish gate's refusal answers with its problems too
    exc = _as_api_exception(exc)
    if request is not None:
        # Errors are JSON on every API view, also those that render YAML or HTML (the
        # schema, its docs) and when content negotiation itself failed.
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    if not isinstance(exc, exceptions.APIException):
        django_request = getattr(request, "_request", request)
        logger.error(
            "Internal Server Error: %s",
            getattr(django_request, "path", "?"),
            exc_info=exc,
            extra={"status_code": 500, "request": django_request},
        )
        got_request_exception.send(sender=None, request=django_request)
        set_rollback()
        return Response(
            error_body(500, "server_error", "Something went wrong on our side."),
            status=500,
        )

    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None) is not None:
        headers["Retry-After"] = str(max(1, int(exc.wait + 0.999)))
    if isinstance(refused, PublicationRefused):
        fields = flatten_fields(exc.detail)
        message = "Publishing is refused: " + " ".join(str(p) for p in refused.problems)
        body = error_body(exc.status_code, "invalid", message, fields)
        body["error"]["problems"] = [problem.as_json() for problem in refused.problems]
    elif isinstance(exc, exceptions.ValidationError):
        fields = flatten_fields(exc.detail)
        body = error_body(exc.status_code, "invalid", _validation_message(fields), fields)
    else:
        code = getattr(exc.detail, "code", None) or exc.default_code
        body = error_body(exc.status_code, str(code), str(exc.detail))
    set_rollback()
    return Response(body, status=exc.status_code, headers=headers)


def _json_error(status_code: int, code: str, message: str) -> JsonResponse:
    body = error_body(status_code, code, message)
    return JsonResponse(body, status=status_code, headers={"Cache-Control": "no-store"})


@csrf_exempt  # a POST to an unknown address is a 404, not a CSRF failure
def not_found(request, *args, **kwargs):
    """Unknown addresses under /api/v1/ answer in the API's error shape too."""
    return _json_error(404, "not_found", "No such API endpoint.")


def _is_api(request) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request, exception=None):
    """handler400: what Django refused before any view ran (a Host header not allowed, too
    many parameters read by middleware). API paths answer in the API's shape."""
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, SuspiciousOperation) and not isinstance(exception, DisallowedHost):
        api_error = _as_api_exception(exception)
        code = getattr(api_error.detail, "code", None) or api_error.default_code
        return _json_error(api_error.status_code, str(code), str(api_error.detail))
    return _json_error(400, BadRequest.default_code, str(BadRequest.default_detail))


def server_error(request):
    """handler500: API paths answer in the API's shape (a view's own errors already do)."""
    if not _is_api(request):
        return defaults.server_error(request)
    return _json_error(500, "server_error", "Something went wrong on our side.")
