"""ETags, Last-Modified, 304s, If-Match preconditions and Cache-Control for the API.

An ETag is a strong validator: a hash of the representation's data, so it changes whenever
anything shown changes (the summary, its video, a cited source's check result) and caches
never serve an outdated answer. Updates must send a version back in If-Match: missing ->
428, different from the current one -> 412, and nothing is written.

A summary's If-Match guards what editors wrote, not what link checks found: its edit
version (`Edit-Version` header, `"<lock_version>-<id>"` of the summary or of its working
copy) moves on every save of that row, which every edit of its content, its video fields,
its key phrases, its pins and its workflow makes, and never when a worker records a check. Its ETag
starts with the edit version (`"<lock_version>-<id>-<hash>"`), so sending back either the
ETag of a read or its Edit-Version matches until someone edits the summary.
"""

import hashlib
import json

from django import forms
from django.conf import settings
from django.http import HttpResponseNotModified
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date, parse_etags
from rest_framework.authentication import TokenAuthentication
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from summaries.pagecache.middleware import canonical_query, mark_cacheable

from .errors import PreconditionFailed, PreconditionRequired, error_body
from .permissions import can_see_unpublished

SAFE = ("GET", "HEAD")
# Query parameters every list reads; views add their filters' names.
LIST_PARAMETERS = frozenset({"cursor", "page_size", "count", "search", "ordering", "expand"})


def entity_tag(data, prefix: str = "") -> str:
    """A strong ETag for serialised data (key order and renderer settings do not matter)."""
    text = json.dumps(data, cls=JSONEncoder, sort_keys=True, separators=(",", ":"))
    return f'"{prefix}{hashlib.sha256(text.encode()).hexdigest()[:32]}"'


def edit_version(summary) -> str:
    """What a write to the summary (or working copy) must have read: its row and its
    lock_version, which Summary.save moves on, as a quoted entity-tag.

    The row's id tells a working copy from its summary and from an earlier, discarded copy,
    which all start at the summary's lock_version.
    """
    return f'"{summary.lock_version}-{summary.pk}"'


def summary_tag(summary, data) -> str:
    """The strong ETag of a summary's representation: its edit version, then a hash."""
    return entity_tag(data, prefix=f"{edit_version(summary)[1:-1]}-")


def _opaque(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


def _matches(tag: str, current: str) -> bool:
    """Whether an If-Match tag names the current version: it is the current tag, or the
    current tag is a version that the tag extends with `-<hash>` (a summary's read ETag
    against its edit version)."""
    tag, current = _opaque(tag), _opaque(current)
    return tag == current or tag.startswith(current[:-1] + "-")


def check_if_match(request, current_tag: str, *, required: bool) -> None:
    """Raise 428 when If-Match is missing (and required), 412 when it names another version.

    `current_tag` is the object's ETag, or a summary's edit version (which its read ETags
    start with). Compared weakly (a W/ prefix added by a proxy is ignored); `*` matches
    any version.
    """
    header = request.META.get("HTTP_IF_MATCH")
    if not header:
        if required:
            raise PreconditionRequired()
        return
    tags = parse_etags(header)
    if tags == ["*"]:
        return
    if not any(_matches(tag, current_tag) for tag in tags):
        raise PreconditionFailed()


def is_private(request) -> bool:
    """Whether the answer may show what anonymous clients do not see, so it is never shared.

    A token of a user who cannot see unpublished work (a read-only token) reads exactly
    what anonymous clients read: its answers are public and page-cached like theirs. Judged
    on the user this request authenticated as, never on the page cache's memory of tokens.
    Session users are private (the browsable API, editors' tools).
    """
    user = getattr(request, "user", None)
    signed_in = user is not None and user.is_authenticated
    if isinstance(getattr(request, "successful_authenticator", None), TokenAuthentication):
        return can_see_unpublished(user)
    return bool(signed_in or request.META.get("HTTP_AUTHORIZATION"))


def reads_are_page_cached() -> bool:
    """Whether anonymous API reads may be kept by the page cache: not when they come from a
    read replica (DATABASE_REPLICA_URL), whose answer may lag behind a change and would
    then be kept past it; the replica takes their load instead."""
    return "replica" not in settings.DATABASES


class ConditionalResponseMixin:
    """Cache headers on every API response, and conditional GET on successful reads.

    Anonymous reads may be kept by browsers and shared caches for API_CACHE_MAX_AGE
    seconds; signed-in responses are `private, no-store` (they may show drafts); errors
    are never stored. A view sets `response["ETag"]` / `response.last_modified` itself or
    gets an ETag hashed from the response data.
    """

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, ("Authorization", "Cookie"))
        ok = request.method in SAFE and response.status_code == 200
        if not ok:
            patch_cache_control(response, no_store=True)
            return response
        if is_private(request):
            patch_cache_control(response, private=True, no_store=True)
        else:
            patch_cache_control(response, public=True, max_age=settings.API_CACHE_MAX_AGE)
        if getattr(response, "data", None) is None:
            return response
        if not response.has_header("ETag"):
            response["ETag"] = entity_tag(response.data)
        last_modified = getattr(response, "last_modified", None)
        if last_modified is not None:
            response["Last-Modified"] = http_date(last_modified.timestamp())
        if not is_private(request) and reads_are_page_cached():
            # Anonymous reads are the same for everyone: the page cache may keep them
            # (stale on any content change or recorded check; pagecache/generation.py).
            query = self.served_query(request, response.data)
            if query is not None:
                mark_cacheable(response, query, own_headers=True)
        conditional = get_conditional_response(
            request._request,
            etag=response["ETag"],
            last_modified=int(last_modified.timestamp()) if last_modified else None,
            response=response,
        )
        if conditional is response or not isinstance(conditional, HttpResponseNotModified):
            return response if conditional is response else self._as_api_error(conditional)
        for header in ("ETag", "Edit-Version", "Last-Modified", "Cache-Control", "Vary"):
            if response.has_header(header):
                conditional[header] = response[header]
        return conditional

    # What the page cache may key a list on: each of a bounded set of values, in one
    # spelling, so that varying the query string cannot add entries without end. Anything
    # else a list reads (search words, dates and times, page sizes other than the largest)
    # is answered and never stored.
    STORED_PARAMETERS = frozenset({"cursor", "page_size", "count", "ordering", "expand"})
    # The parts `?expand=` may name (SummaryViewSet), in the order the stored spelling
    # lists them.
    expandable: tuple[str, ...] = ()

    def served_query(self, request, data=None) -> str | None:
        """The query string of what was served, in the page cache's spelling, or None when
        the answer may not be stored at all.

        Only parameters the view reads count (a made-up one makes the request's spelling
        differ, so it is never stored); a list is kept only for values from bounded sets,
        each in one spelling (`stored_value`).
        """
        if getattr(self, "action", "") != "list":
            return ""
        pairs = []
        for name, values in request.query_params.lists():
            if not self._reads(name) or not any(values):
                continue
            if len(values) > 1:
                return None  # only the last is read: each repetition would be a spelling
            value = self.stored_value(name, values[0], data)
            if value is None:
                return None
            pairs.append((name, value))
        return canonical_query(pairs)

    def _reads(self, name: str) -> bool:
        filterset = getattr(self, "filterset_class", None)
        return name in LIST_PARAMETERS or (filterset is not None and name in filterset.base_filters)

    def stored_value(self, name: str, value: str, data) -> str | None:
        """`value` as the stored answer's query spells it, or None: never stored."""
        if name in self.STORED_PARAMETERS:
            return self._stored_list_value(name, value)
        if name in LIST_PARAMETERS:
            return None  # search words: any number of them
        filterset = getattr(self, "filterset_class", None)
        field = filterset.base_filters[name].field_class if filterset is not None else None
        if field is not None and issubclass(field, forms.ChoiceField):
            return value  # one of its choices (another value is a 400)
        if field is not None and issubclass(field, forms.CharField):
            # A slug: kept when it names something the list holds (a bounded set), not
            # for each name of nothing.
            return value if data and data.get("results") else None
        return None  # dates and times: any number of them

    def _stored_list_value(self, name: str, value: str) -> str | None:
        if name == "cursor":
            # Only a cursor exactly as this site wrote it in a `next` or `previous` link.
            paginator = getattr(self, "paginator", None)
            return value if value == getattr(paginator, "issued_cursor", None) else None
        if name == "page_size":
            return value if value == str(settings.API_MAX_PAGE_SIZE) else None
        if name == "count":
            return value if value == "true" else None
        if name == "expand":
            parts = {part.strip() for part in value.split(",")}
            if not parts <= set(self.expandable):
                return None
            return ",".join(part for part in self.expandable if part in parts)
        return value  # ordering: one of the view's orderings (another value is a 400)

    def _as_api_error(self, conditional):
        # A failed If-Match / If-Unmodified-Since on a read: answer in the API's shape.
        response = Response(
            error_body(412, "precondition_failed", "A precondition of the request failed."),
            status=412,
        )
        return super().finalize_response(self.request, response)
