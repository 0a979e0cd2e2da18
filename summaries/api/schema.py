"""OpenAPI details drf-spectacular cannot infer: the error responses every operation has."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

# The kinds of part a statement is pinned on, as the API names them (one enum in the schema).
PART_KIND_CHOICES = ["key_point", "takeaway", "chapter", "caveat"]


class PublicationProblemSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=PART_KIND_CHOICES, help_text="The part's kind.")
    id = serializers.IntegerField(help_text="The part's id.")
    quote = serializers.IntegerField(
        allow_null=True,
        help_text="Which quotation of the chapter's body (from 0), or null: the part's own "
        "statement.",
    )
    message = serializers.CharField(help_text="The statement, and why it is refused.")


class ErrorDetailSerializer(serializers.Serializer):
    status = serializers.IntegerField(help_text="The HTTP status code.")
    code = serializers.CharField(help_text="A stable, machine-readable code (e.g. `invalid`).")
    message = serializers.CharField(help_text="What went wrong, for people.")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Messages per input path (`video.duration`, `chapters[2].title`).",
    )
    problems = PublicationProblemSerializer(
        many=True,
        required=False,
        help_text="A publication refused by the receipts: each statement that keeps the "
        "summary from being published.",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


ERRORS = {
    "400": "Invalid input or query parameters; `fields` names each problem.",
    "401": "Missing or invalid credentials (send `Authorization: Token <key>`).",
    "403": "Signed in, but not allowed to do this.",
    "404": "No such object, or not published (drafts are invisible to anonymous clients).",
    "406": "The Accept header asks for something other than JSON.",
    "409": "A concurrent request wrote a conflicting row; nothing was saved.",
    "412": "If-Match names another version: it changed since it was read.",
    "413": "The request body is too large.",
    "415": "The body is not JSON (send `Content-Type: application/json`).",
    "428": "If-Match is required: send the ETag of the version being changed.",
    "429": "Too many requests; wait for the number of seconds in Retry-After.",
}


# Reads that answer only editors (anyone else gets a 404).
EDITORS_ONLY_READS = ("/working-copy/",)
# Paths only editors read or write (anyone else gets a 401 or 403).
EDITORS_ONLY_PATHS = ("/api/v1/webhooks/",)


class ApiAutoSchema(AutoSchema):
    """Adds the API's error responses (one shared shape) to each operation, and says that
    reads need no credentials."""

    def get_auth(self):
        auth = super().get_auth()
        # Published content is read without credentials: an empty requirement says so
        # (drafts stay invisible to such clients; writes still need a token).
        editors_only = self.path.endswith(EDITORS_ONLY_READS) or self._editors_only_path()
        if self.method in ("GET", "HEAD") and not editors_only and {} not in auth:
            auth.append({})
        return auth

    def _editors_only_path(self) -> bool:
        return self.path.startswith(EDITORS_ONLY_PATHS)

    def _error_codes(self) -> list[str]:
        detail = "{" in self.path
        codes = ["400", "401", "406", "429"]
        if detail:
            codes.append("404")
        if self.method in ("GET", "HEAD") and self._editors_only_path():
            codes.append("403")
        if self.method not in ("GET", "HEAD"):
            codes += ["403", "409", "413", "415"]
        if self.method in ("PUT", "PATCH"):
            codes += ["412", "428"]
        elif self.method == "POST" and detail:
            codes.append("412")
        return sorted(codes)

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if self.method == "GET":
            responses.setdefault(
                "304", {"description": "Not modified (If-None-Match or If-Modified-Since)."}
            )
        for code in self._error_codes():
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ErrorSerializer, description=ERRORS[code]),
                    code,
                    direction=direction,
                )
        return responses
