"""Summaries: read (anyone: live ones; editors: all), write whole, publish, re-check."""

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from django.db import transaction
from django.db.models import Exists, F, OuterRef, Prefetch
from django.db.models.functions import Coalesce
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import http_date
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404 as get_row_or_404
from rest_framework.response import Response

from summaries import checking
from summaries.editing import copies, derived, review, rules, save, video_changes, workflow
from summaries.editing.revisions import compare_live_and_changes
from summaries.models import (
    Appearance,
    Caveat,
    Citation,
    Source,
    Summary,
)
from summaries.models.evidence import cited_evidence
from summaries.reader.absolute import site_url
from summaries.text.remembered import remembering

from . import representation
from .conditional import check_if_match, edit_version, summary_tag
from .filters import FilterBackend, OrderingFilter, SummaryFilter, SummarySearchFilter
from .inputs import KeyPhraseInput, SummaryInput
from .permissions import can_see_unpublished
from .review import (
    AssignSerializer,
    ChangesDiffSerializer,
    ReplySerializer,
    ReviewMessageSerializer,
    SubmitSerializer,
)
from .summary_serializers import (
    EXPANDABLE,
    PublishSerializer,
    SendBackSerializer,
    SummaryListItemSerializer,
    SummarySerializer,
    SummaryWrittenSerializer,
)
from .views import ApiViewSet

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=True,
    description=(
        "The version being changed, from a GET: its `ETag`, or its `Edit-Version` (the "
        "part of the ETag that If-Match compares). It names what editors wrote (content, "
        "video fields, key phrases, workflow), not sources' check results: a check "
        "recorded since the GET changes the ETag, for caches, but not what If-Match "
        "compares. 428 without it, 412 when someone edited the summary since."
    ),
)
IF_MATCH_ACTION = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=True,
    description=(
        "The `ETag` or `Edit-Version` of what the action changes: the summary's unpublished "
        "changes when it has them (GET …/working-copy/), otherwise the summary. Compared "
        "by edit version, which moves with every edit and workflow step, not with sources' "
        "check results. 428 without it, 412 when someone edited it since."
    ),
)

EXPAND_PINS = OpenApiParameter(
    "expand",
    str,
    description=(
        "`pins`: each part's pin to the words said in the video's transcript (status, "
        "span times, the words quoted, the reason, approval and override), and each "
        "chapter's `quote_pins`. Without it parts have no `pin`."
    ),
)


def _part_prefetches() -> dict:
    return {
        "key_points": "key_points",
        "takeaways": "takeaways",
        "chapters": "chapters",
        "caveats": Prefetch(
            "caveats",
            queryset=Caveat.objects.annotate(
                chapter_position=F("chapter__position"),
                key_point_position=F("key_point__position"),
                takeaway_position=F("takeaway__position"),
            ),
        ),
        "citations": Prefetch(
            "citations",
            queryset=Citation.objects.select_related("source", "archived_copy").annotate(
                chapter_position=F("chapter__position"),
                key_point_position=F("key_point__position"),
                takeaway_position=F("takeaway__position"),
                **cited_evidence(),
            ),
        ),
    }


def _with_video(queryset):
    return queryset.select_related("video", "video__channel", "assigned_to").prefetch_related(
        Prefetch(
            "video__appearances",
            queryset=Appearance.objects.select_related("person", "organisation"),
        ),
        "video__topics",
    )


def summary_details(queryset, *, citations: bool = True):
    """Everything a summary's representation shows, in a fixed number of queries; without
    its citations when `citations` is False (see `with_written_citations`)."""
    prefetches = _part_prefetches()
    if not citations:
        del prefetches["citations"]
    return _with_video(queryset).prefetch_related(*prefetches.values())


# A citation's part, and the summary's prefetched parts of that kind.
_CITED_PARTS = (("chapter", "chapters"), ("key_point", "key_points"), ("takeaway", "takeaways"))


def with_written_citations(summary: Summary, written: derived.WrittenCitations) -> Summary:
    """The summary (read by `summary_details` without citations) showing its citations as
    a save just wrote them (editing.derived.recording_citations), as the detail query
    would read them: each with its source and the position of its part.

    A save of a long chapter writes thousands of citations: reading them back took a
    tenth of its time. When the save inserted every source they cite, those are shown as
    written; otherwise the sources are read in one query (a check may have changed them).
    The positions are taken from the summary's parts.
    """
    citations = written.citations
    positions = {
        name: {part.pk: part.position for part in getattr(summary, parts).all()}
        for name, parts in _CITED_PARTS
    }
    sources = written.new_sources
    if any(citation.source_id not in sources for citation in citations):
        cited = Citation.objects.filter(summary=summary).values("source_id")
        sources = {source.pk: source for source in Source.objects.filter(pk__in=cited).order_by()}
    for citation in citations:
        citation.source = sources[citation.source_id]
        for name, _parts in _CITED_PARTS:
            part_id = getattr(citation, f"{name}_id")
            setattr(citation, f"{name}_position", positions[name].get(part_id))
    # As prefetch_related leaves a relation: a queryset that answers from its rows.
    rows = Citation.objects.filter(summary=summary)
    rows._result_cache = citations
    rows._prefetch_done = True  # type: ignore[attr-defined]  # Django's, not in the stubs
    summary._prefetched_objects_cache["citations"] = rows  # type: ignore[attr-defined]
    return summary


# What a list page is found by: its rows' ids and every field lists sort by (cursors are
# made of the ordering's first field).
_PAGED_FIELDS = ("id", "publish_order", "updated_at", "created_at")


@dataclass(frozen=True)
class _Version:
    """What a summary's edit version is made of (conditional.edit_version)."""

    pk: int
    lock_version: int


def summary_list_items(queryset, expand=()):
    """What a list shows: the video, how many parts each summary has (in the same query),
    and the parts asked for with ?expand=."""
    parts = _part_prefetches()
    return (
        _with_video(queryset)
        .annotate(**representation.part_counts())
        .prefetch_related(*(parts[name] for name in expand))
    )


def last_modified(summary):
    """The latest change to anything the summary's representation shows."""
    video = summary.video
    stamps = [summary.updated_at, video.updated_at, video.channel.updated_at]
    for appearance in video.appearances.all():
        stamps.append(appearance.person.updated_at)
        if appearance.organisation is not None:
            stamps.append(appearance.organisation.updated_at)
    stamps += [topic.updated_at for topic in video.topics.all()]
    stamps += [citation.source.updated_at for citation in summary.citations.all()]
    return max(stamps)


class RecheckSerializer(serializers.Serializer):
    sources = serializers.IntegerField(help_text="How many sources the summary cites.")
    queued = serializers.IntegerField(
        help_text="Sources queued for a check now (not ignored ones, nor those being checked)."
    )


def requires(permission):
    """Name the permission an action needs (read by permissions.ReadOrEditorWrite)."""

    def decorate(view_method):
        view_method.required_permission = permission
        return view_method

    return decorate


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class SummaryViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    ApiViewSet,
):
    """Summaries with their parts and cited sources. Addressed by their video's slug."""

    serializer_class = SummarySerializer
    lookup_field = "video__slug"
    lookup_url_kwarg = "slug"
    filter_backends = [FilterBackend, SummarySearchFilter, OrderingFilter]
    filterset_class = SummaryFilter
    expandable = EXPANDABLE
    ordering_choices = {
        "-publish_at": ("-publish_order", "-pk"),
        "publish_at": ("publish_order", "pk"),
        "-updated_at": ("-updated_at", "-pk"),
        "updated_at": ("updated_at", "pk"),
        "-created_at": ("-created_at", "-pk"),
        "created_at": ("created_at", "pk"),
    }
    default_ordering = "-publish_at"

    def get_queryset(self):
        summaries = self._summaries()
        if self.action == "list":
            return summary_list_items(summaries, self._expand())
        return summary_details(summaries)

    def _summaries(self):
        """The summaries the user may read, with what lists and details sort by."""
        if can_see_unpublished(self.request.user):
            # Drafts have no publish time; they sort by when they were created.
            return Summary.objects.originals().annotate(
                publish_order=Coalesce("publish_at", "created_at"),
                has_working_copy=Exists(Summary.objects.filter(working_copy_of=OuterRef("pk"))),
            )
        return Summary.objects.published().annotate(publish_order=F("publish_at"))

    def _expand(self) -> tuple[str, ...]:
        """The parts named in ?expand= (comma-separated), or a 400 naming `expand`."""
        names = [n.strip() for n in self.request.query_params.get("expand", "").split(",")]
        names = [name for name in names if name]
        unknown = [name for name in names if name not in EXPANDABLE]
        if unknown:
            raise serializers.ValidationError(
                {"expand": [f"Unknown part {unknown[0]!r}: choose from {', '.join(EXPANDABLE)}."]}
            )
        return tuple(dict.fromkeys(names))

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "expand",
                str,
                description=(
                    "Parts to include in full in each item, comma-separated: "
                    + ", ".join(EXPANDABLE)
                    + ". Without it an item has the video, times, the 30-second text and "
                    "`counts` (how many of each part), not the parts."
                ),
            )
        ],
        responses=SummaryListItemSerializer(many=True),
    )
    def list(self, request, *args, **kwargs):
        """Summaries, newest first; lean items unless ?expand= asks for parts."""
        expand = self._expand()
        # The page is found by a lean query (filters, ordering, cursor); its rows are then
        # read by id, by a query compiled once per process for clients who are not staff.
        found = self.filter_queryset(self._summaries()).values(*_PAGED_FIELDS)
        page = self.paginate_queryset(found) or []
        rows = self._list_rows([row["id"] for row in page])
        items = representation.summary_items(rows, request, expand=expand)
        return self.get_paginated_response(items)

    def _list_rows(self, ids: Sequence[int]) -> Sequence[dict]:
        """The list rows (representation.LIST_FIELDS) of the summaries `ids`, in order."""
        if not self.request.user.is_staff:
            found = representation.LIST_ROWS.run(ids=ids) if ids else []
        else:
            rows = self._summaries().filter(pk__in=ids).annotate(**representation.part_counts())
            found = list(rows.values(*self._row_fields(representation.LIST_FIELDS)))
        by_id = {row["id"]: row for row in found}
        return [by_id[pk] for pk in ids]

    def _row_fields(self, fields: tuple[str, ...]) -> tuple[str, ...]:
        """The columns of a summary's row: `fields`, what lists sort by, and for editors
        whether it has unpublished changes (and for staff who reviews it)."""
        user = self.request.user
        extra: tuple[str, ...] = ("publish_order",)
        if user.is_staff:
            extra += representation.STAFF_FIELDS
        if can_see_unpublished(user):
            extra += ("has_working_copy",)
        return (*fields, *extra)

    def _summary_row(self) -> dict:
        """The row of the summary the URL names, through the list's filters (a detail
        answers 404 when they leave it out, and 400 to a bad filter value), or 404.

        A client who is not staff, with no filter in the query string, reads a live
        summary by a query compiled once per process."""
        slug = self.kwargs["slug"]
        if not self.request.user.is_staff and not self._filtered():
            live = representation.LIVE_SUMMARY.run(slug=slug)
            if not live:
                raise Http404("No summary matches the given query.")
            return live[0]
        rows = self.filter_queryset(self._summaries())
        fields = self._row_fields(representation.SUMMARY_FIELDS)
        return get_row_or_404(rows.values(*fields), video__slug=slug)

    def _filtered(self) -> bool:
        """Whether the query string names anything the filter backends read."""
        read = {*self.filterset_class.base_filters, "search", "ordering"}
        return any(name in read for name in self.request.query_params)

    # --- Reading -----------------------------------------------------------------------

    def _details(self, summary, citations=None):
        """The summary (or working copy) loaded with everything its representation shows;
        with `citations` (what a save just wrote for it: derived.WrittenCitations) shown
        rather than read back."""
        read = citations is None
        if not summary.is_working_copy:
            queryset = summary_details(self._summaries(), citations=read)
            fresh = get_object_or_404(queryset, pk=summary.pk)
            return fresh if read else with_written_citations(fresh, citations)
        copy = get_object_or_404(
            summary_details(Summary.objects.all(), citations=read), pk=summary.pk
        )
        if not read:
            with_written_citations(copy, citations)
        live = get_object_or_404(self.get_queryset(), pk=summary.working_copy_of_id)
        # In memory only, for the representation: the copy is about its summary's video,
        # as its changes would make it.
        copy.video, copy.working_copy_of = live.video, live
        if copy.video_changes:
            copy.video = video_changes.pending_video(live.video, copy.video_changes)
        return copy

    def _data(self, summary):
        data = self.get_serializer(summary).data
        if summary.is_working_copy:
            slug = summary.video.slug
            data["url"] = site_url(reverse("api:summary-working-copy", kwargs={"slug": slug}))
        return data

    def _respond(self, summary, status_code=status.HTTP_200_OK, headers=None, citations=None):
        """The summary (or its working copy) after a write: as the detail endpoint shows it
        (with its ETag and Last-Modified), plus the editor's warnings, as the admin shows them.
        `citations`: its citations as the write left them (see `_details`)."""
        fresh = self._details(summary, citations)
        data = self._data(fresh)
        warnings = [asdict(warning) for warning in rules.summary_warnings(summary=fresh)]
        response = Response({**data, "warnings": warnings}, status=status_code, headers=headers)
        response["ETag"] = summary_tag(fresh, data)
        response["Edit-Version"] = edit_version(fresh)
        response["Last-Modified"] = http_date(last_modified(fresh).timestamp())
        return response

    @extend_schema(parameters=[EXPAND_PINS])
    def retrieve(self, request, *args, **kwargs):
        row = self._summary_row()
        self.check_object_permissions(request, row)
        detail = representation.summary_detail(row, request, context=self.get_serializer_context())
        version = _Version(row["id"], row["lock_version"])
        response = Response(detail.data)
        response["ETag"] = summary_tag(version, detail.data)
        response["Edit-Version"] = edit_version(version)
        response.last_modified = detail.last_modified
        return response

    # --- Writing -----------------------------------------------------------------------

    def _locked(self):
        """The summary addressed by the URL, locked until the transaction ends against
        other writes of it (FOR NO KEY UPDATE: a worker recording checks of its sources
        may meanwhile write a row pointing at it, a notification, while it holds citations
        this request is about to write; see editing.derived.lock_citations)."""
        summaries = Summary.objects.select_for_update(of=("self",), no_key=True).select_related(
            "video"
        )
        return get_object_or_404(summaries, video__slug=self.kwargs["slug"])

    @staticmethod
    def _current_tag(summary):
        """What If-Match must name: the edit version, which recorded checks leave alone."""
        return edit_version(summary)

    @staticmethod
    def _edited(summary):
        """What a write to the summary changes: its working copy when it has one."""
        return copies.working_copy_of(summary) or summary

    @extend_schema(request=SummaryInput, responses={201: SummaryWrittenSerializer})
    def create(self, request, *args, **kwargs):
        """Create a draft summary, its video and all its parts in one request."""
        payload = SummaryInput(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        # The answer is built before the commit: a request that fails or is cut short
        # while answering has saved nothing. Each text is converted once for both.
        # The citations the save wrote are shown as written, not read back.
        with transaction.atomic(), remembering(), derived.recording_citations() as written:
            summary = save.create_summary(data=payload.validated_data, user=request.user)
            url = reverse("api:summary-detail", kwargs={"slug": summary.video.slug})
            return self._respond(
                summary,
                status.HTTP_201_CREATED,
                headers={"Location": site_url(url)},
                citations=written.get(summary.pk),
            )

    def _update(self, request, *, partial):
        # Answered before the commit, as create, with the citations as written.
        with transaction.atomic(), remembering(), derived.recording_citations() as written:
            summary = self._locked()
            edited = self._edited(summary)
            check_if_match(request, self._current_tag(edited), required=True)
            payload = SummaryInput(
                data=request.data, partial_update=partial, context=self.get_serializer_context()
            )
            payload.is_valid(raise_exception=True)
            with transaction.atomic():
                edited, _, made = copies.edit_target(summary=summary, user=request.user)
                edited = save.update_summary(
                    summary=edited, data=payload.validated_data, user=request.user, partial=partial
                )
                if copies.drop_if_unchanged(copy=edited, made=made):
                    edited = summary  # nothing changed: no unpublished changes to review
            return self._respond(edited, citations=written.get(edited.pk))

    @extend_schema(request=SummaryInput, responses=SummaryWrittenSerializer, parameters=[IF_MATCH])
    def update(self, request, *args, **kwargs):
        """Replace the whole summary: lists left out become empty.

        A published summary is not changed for readers: the write goes to its unpublished
        changes (a working copy, made from it on the first write), which the answer shows
        and `publish` makes live. If-Match is then the working copy's ETag. Video fields
        sent are saved on the video at once.
        """
        return self._update(request, partial=False)

    @extend_schema(request=SummaryInput, responses=SummaryWrittenSerializer, parameters=[IF_MATCH])
    def partial_update(self, request, *args, **kwargs):
        """Replace only the fields sent (a list sent replaces that whole list)."""
        return self._update(request, partial=True)

    # --- Workflow ----------------------------------------------------------------------

    def _workflow(self, request, service, **kwargs):
        with transaction.atomic():  # answered before the commit, as create
            summary = self._locked()
            check_if_match(request, self._current_tag(self._edited(summary)), required=True)
            service(summary=summary, user=request.user, **kwargs)
            edited = copies.working_copy_of(summary) or summary
            return self._respond(edited)

    @extend_schema(
        request=PublishSerializer,
        responses=SummaryWrittenSerializer,
        parameters=[IF_MATCH_ACTION],
    )
    @action(detail=True, methods=["post"])
    @requires("summaries.publish_summary")
    def publish(self, request, slug=None):
        """Publish now, or schedule with a future `publish_at`; a published summary's
        unpublished changes are made live (or scheduled) instead, as a `change_kind` with
        its public `note` (a correction needs one: 400 naming `note` without)."""
        payload = PublishSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        given = payload.validated_data
        return self._workflow(
            request,
            workflow.publish_summary,
            at=given.get("publish_at"),
            change_kind=given.get("change_kind"),
            note=given.get("note", ""),
        )

    @extend_schema(request=None, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_ACTION])
    @action(detail=True, methods=["post"])
    @requires("summaries.publish_summary")
    def unpublish(self, request, slug=None):
        """Take a live or scheduled summary back to draft."""
        return self._workflow(request, workflow.unpublish_summary)

    @extend_schema(
        request=SubmitSerializer, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_ACTION]
    )
    @action(detail=True, methods=["post"], url_path="submit-for-review")
    @requires("summaries.change_summary")
    def submit_for_review(self, request, slug=None):
        """Mark a draft, or a published summary's unpublished changes, ready for review,
        with an optional message to the reviewer (kept in the review conversation)."""
        payload = SubmitSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        message = payload.validated_data.get("message", "")
        return self._workflow(request, workflow.submit_for_review, message=message)

    @extend_schema(
        request=SendBackSerializer, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_ACTION]
    )
    @action(detail=True, methods=["post"], url_path="send-back")
    @requires("summaries.publish_summary")
    def send_back(self, request, slug=None):
        """A reviewer sends a summary (or its changes) in review back, with a note."""
        payload = SendBackSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return self._workflow(request, workflow.send_back, note=payload.validated_data["note"])

    @extend_schema(request=None, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_ACTION])
    @action(detail=True, methods=["post"], url_path="discard-changes")
    @requires("summaries.change_summary")
    def discard_changes(self, request, slug=None):
        """Drop a published summary's unpublished changes; readers see no change."""
        with transaction.atomic():
            summary = self._locked()
            check_if_match(request, self._current_tag(self._edited(summary)), required=True)
            if not copies.discard_changes(summary=summary, user=request.user):
                raise NotFound("This summary has no unpublished changes.")
            return self._respond(summary)

    @extend_schema(responses=SummarySerializer, parameters=[EXPAND_PINS])
    @action(detail=True, methods=["get"], url_path="working-copy")
    def working_copy(self, request, slug=None):
        """A published summary's unpublished changes (editors only), with their ETag."""
        summary = get_object_or_404(self.get_queryset(), video__slug=slug)
        copy = copies.working_copy_of(summary) if can_see_unpublished(request.user) else None
        if copy is None:
            raise NotFound("This summary has no unpublished changes.")
        fresh = self._details(copy)
        data = self._data(fresh)
        response = Response(data)
        response["ETag"] = summary_tag(fresh, data)
        response["Edit-Version"] = edit_version(fresh)
        response.last_modified = last_modified(fresh)
        return response

    @extend_schema(
        responses={
            200: ChangesDiffSerializer,
            404: OpenApiResponse(description="No such summary, or it has no changes."),
        }
    )
    @action(
        detail=True, methods=["get"], url_path="working-copy/diff", url_name="working-copy-diff"
    )
    def working_copy_diff(self, request, slug=None):
        """What a published summary's unpublished changes change (editors only): field by
        field and word by word, its parts added, removed, moved and edited, against the
        summary readers see now."""
        summary = get_object_or_404(self.get_queryset(), video__slug=slug)
        comparison = None
        if can_see_unpublished(request.user):
            comparison = compare_live_and_changes(summary)
        if comparison is None:
            raise NotFound("This summary has no unpublished changes.")
        return Response(ChangesDiffSerializer(comparison).data)

    @extend_schema(methods=["GET"], request=None, responses=ReviewMessageSerializer(many=True))
    @extend_schema(
        methods=["POST"], request=ReplySerializer, responses={201: ReviewMessageSerializer}
    )
    @action(detail=True, methods=["get", "post"], url_path="review-messages")
    @requires("summaries.change_summary")
    def review_messages(self, request, slug=None):
        """The summary's review conversation, oldest first (editors only: 404 to others);
        POST adds a reply by an editor or a reviewer."""
        if not can_see_unpublished(request.user):
            raise NotFound("No such summary.")
        summary = get_object_or_404(Summary.objects.originals(), video__slug=slug)
        if request.method == "POST":
            payload = ReplySerializer(data=request.data)
            payload.is_valid(raise_exception=True)
            message = review.reply(
                summary=summary, user=request.user, text=payload.validated_data["text"]
            )
            return Response(ReviewMessageSerializer(message).data, status=status.HTTP_201_CREATED)
        return Response(ReviewMessageSerializer(review.thread(summary), many=True).data)

    @extend_schema(request=AssignSerializer, responses=SummaryWrittenSerializer)
    @action(detail=True, methods=["post"], url_path="assign-reviewer")
    @requires("summaries.change_summary")
    def assign_reviewer(self, request, slug=None):
        """Ask a reviewer (a user who may publish) to review the summary and its changes;
        they alone are told when it is sent for review. Not an edit: no If-Match."""
        payload = AssignSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        username = payload.validated_data["reviewer"]
        reviewer = None
        if username:
            reviewer = review.reviewer_choices().filter(username=username).first()
            if reviewer is None:
                raise serializers.ValidationError(
                    {"reviewer": [f"{username!r} is not a user who may review."]}
                )
        summary = get_object_or_404(Summary.objects.originals(), video__slug=slug)
        review.assign_reviewer(summary=summary, reviewer=reviewer, user=request.user)
        return self._respond(self._edited(summary))

    @extend_schema(
        request=None,
        responses={202: OpenApiResponse(RecheckSerializer, description="Accepted.")},
    )
    @action(detail=True, methods=["post"], url_path="recheck-sources")
    @requires("summaries.change_summary")
    def recheck_sources(self, request, slug=None):
        """Ask for the summary's cited sources to be checked again (answers 202)."""
        summary = get_object_or_404(Summary.objects.all(), video__slug=slug)
        sources, queued = checking.request_summary_checks(summary=summary, user=request.user)
        return Response(
            {"sources": len(sources), "queued": len(queued)}, status=status.HTTP_202_ACCEPTED
        )

    # --- Citations ---------------------------------------------------------------------

    @extend_schema(
        request=KeyPhraseInput,
        responses=SummaryWrittenSerializer,
        parameters=[
            IF_MATCH,
            OpenApiParameter(
                "citation_id",
                int,
                OpenApiParameter.PATH,
                description="The citation's `id` (in the summary's `citations`).",
            ),
        ],
    )
    @action(detail=True, methods=["patch"], url_path=r"citations/(?P<citation_id>[0-9]+)")
    @requires("summaries.change_summary")
    def citation(self, request, slug=None, citation_id=None):
        """Set a citation's key phrase: what its source page must still say.

        An empty phrase goes back to the one extracted from the claim; an edited phrase is
        kept when the text is edited later; a body without `key_phrase` changes nothing.
        On a published summary the phrase is an edit like any other: it goes to the
        unpublished changes (a citation id of the live summary or of its changes may be
        sent). Answers with what was changed, as other writes do.
        """
        with transaction.atomic():
            summary = self._locked()
            edited = self._edited(summary)
            get_object_or_404(
                Citation.objects.filter(summary__in=[summary, edited]), pk=citation_id
            )
            check_if_match(request, self._current_tag(edited), required=True)
            payload = KeyPhraseInput(data=request.data, partial=True)
            payload.is_valid(raise_exception=True)
            if "key_phrase" not in payload.validated_data:  # a PATCH without it changes nothing
                return self._respond(edited)
            with transaction.atomic():
                try:
                    edited, made = copies.set_key_phrase(
                        summary=summary,
                        citation_id=int(citation_id),
                        phrase=payload.validated_data["key_phrase"],
                        user=request.user,
                    )
                except Citation.DoesNotExist:
                    raise NotFound("The unpublished changes no longer cite this link.") from None
                if copies.drop_if_unchanged(copy=edited, made=made):
                    edited = summary
        return self._respond(edited)
