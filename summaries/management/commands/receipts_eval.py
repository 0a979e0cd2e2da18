"""Judge statements about a talk against its transcript, as the admin would pin them.

    manage.py receipts_eval TRANSCRIPT_FILE CLAIMS_JSONL OUTPUT_JSON

TRANSCRIPT_FILE is any transcript an editor can import (WebVTT, SubRip, YouTube json3,
Whisper JSON; the format is read from the content). CLAIMS_JSONL holds a statement a line:

    {"id": "t-1", "kind": "key_point", "text": "Raman argues that...", "time": 312}

`kind` is key_point, takeaway, caveat, chapter (with "title"; `text` is the opening of its
body, `time` its start) or quote (the words of a quotation in a chapter body); `time` is the
second the statement says it is said (null or left out: none). Other keys are ignored.

The statements become one fresh summary of a fresh video: the transcript imported with
`pinning.import_transcript`, each statement pinned to the first suggestion for it (a key
point, takeaway, caveat or chapter start by `pinning.set_pin`; a quotation as a chapter's
quote pins are, when the chapter is saved). OUTPUT_JSON maps each id to its verdict:

    {"t-1": {"status": "paraphrase", "time": 311.4}}

where `time` is where the pinned words are said (for mis_timed, where the statement is
said instead; for not_found, null).

All of it happens in a private in-memory SQLite database made for the run and dropped at
its end, inside a transaction that is rolled back: the configured database is never
touched, no task is queued and no file but OUTPUT_JSON is written.
"""

from __future__ import annotations

import datetime
import json
import math
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction
from django.db.utils import load_backend

from summaries.editing import pinning, receipts
from summaries.models import Caveat, Channel, Chapter, KeyPoint, Summary, Takeaway, Video
from summaries.text import pins as pin_text
from summaries.text.transcripts import TranscriptError, parse_transcript

KINDS = ("key_point", "takeaway", "caveat", "chapter", "quote")
EDITORS = "Editors"
# The words of a statement a part's title takes (a title is required, not judged).
TITLE_WORDS = 8


@dataclass(frozen=True)
class Claim:
    id: str
    kind: str
    text: str
    time: int | None
    title: str


class Command(BaseCommand):
    help = (
        "Import a transcript into a throwaway database, pin each statement of CLAIMS_JSONL "
        "as the admin's first suggestion would and write each verdict to OUTPUT_JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("transcript", metavar="TRANSCRIPT_FILE")
        parser.add_argument("claims", metavar="CLAIMS_JSONL")
        parser.add_argument("output", metavar="OUTPUT_JSON")

    def handle(self, *args, **options):
        started = time.perf_counter()
        path = Path(options["transcript"])
        data = _read_bytes(path, "TRANSCRIPT_FILE")
        duration = _transcript_seconds(data, path.name)
        claims = read_claims(Path(options["claims"]))
        with throwaway_database():
            results = evaluate(data, path.name, duration, claims)
        output = Path(options["output"])
        try:
            output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            raise CommandError(f"OUTPUT_JSON {output}: {error.strerror}") from None
        if options["verbosity"] >= 1:
            seconds = time.perf_counter() - started
            self.stdout.write(f"{len(results)} statements judged in {seconds:.1f} s: {output}")


def _read_bytes(path: Path, name: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"{name} {path}: {error.strerror}") from None


def _transcript_seconds(data: bytes, filename: str) -> int:
    """The video's length, taken as the end of the transcript (read once here so that an
    unreadable file is refused before any database is made)."""
    try:
        parsed = parse_transcript(
            data,
            filename=filename,
            max_bytes=settings.TRANSCRIPT_MAX_BYTES,
            max_words=settings.TRANSCRIPT_MAX_WORDS,
        )
    except TranscriptError as error:
        raise CommandError(f"TRANSCRIPT_FILE cannot be imported: {error.message}") from None
    last = max((segment.end for segment in parsed.segments), default=1.0)
    return max(1, math.ceil(last))


def read_claims(path: Path) -> list[Claim]:
    """The statements of a claims file; a CommandError naming the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CommandError(f"CLAIMS_JSONL {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"CLAIMS_JSONL {path}: not UTF-8 text") from None
    claims: list[Claim] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if line.strip():
            claim = _claim(line, f"CLAIMS_JSONL line {number}")
            if claim.id in seen:
                raise CommandError(f"CLAIMS_JSONL line {number}: the id {claim.id!r} is used twice")
            seen.add(claim.id)
            claims.append(claim)
    if not claims:
        raise CommandError(f"CLAIMS_JSONL {path}: no statement")
    return claims


def _claim(line: str, where: str) -> Claim:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise CommandError(f"{where}: not JSON ({error.msg})") from None
    if not isinstance(item, dict):
        raise CommandError(f"{where}: a statement is a JSON object")
    ident, kind, text = item.get("id"), item.get("kind"), item.get("text")
    if not isinstance(ident, str) or not ident.strip():
        raise CommandError(f'{where}: "id" must be a non-empty string')
    where = f"{where} ({ident})"
    if kind not in KINDS:
        raise CommandError(f'{where}: "kind" must be one of {", ".join(KINDS)}, not {kind!r}')
    if not isinstance(text, str) or not text.strip():
        raise CommandError(f'{where}: "text" must be a non-empty string')
    stated = item.get("time")
    if stated is not None and (
        isinstance(stated, bool)
        or not isinstance(stated, (int, float))
        or not math.isfinite(stated)
        or stated < 0
    ):
        raise CommandError(f'{where}: "time" must be seconds (a number from 0) or null')
    title = item.get("title")
    if title is not None and not isinstance(title, str):
        raise CommandError(f'{where}: "title" must be a string')
    title = " ".join((title or "").split()) or " ".join(text.split()[:TITLE_WORDS])
    return Claim(ident, kind, " ".join(text.split()), _whole(stated), title[:200])


def _whole(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds)


# --- The throwaway database ------------------------------------------------------------


@contextmanager
def throwaway_database() -> Iterator[None]:
    """The default connection pointed at a new in-memory SQLite database with every
    migration applied, for the duration of the block; the configured database's
    connection is put back afterwards, untouched."""
    name = f"file:receipts_eval_{uuid.uuid4().hex}?mode=memory&cache=shared"
    configured = connections.configure_settings(
        {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": name}}
    )["default"]
    wrapper = load_backend(configured["ENGINE"]).DatabaseWrapper(configured, "default")
    previous = connections["default"]
    connections["default"] = wrapper
    try:
        call_command("migrate", verbosity=0, interactive=False, database="default")
        yield
    finally:
        # An in-memory SQLite connection ignores close() (it would drop the data); this
        # one is meant to go, its database with it.
        if wrapper.connection is not None:
            wrapper.connection.close()
            wrapper.connection = None
        connections["default"] = previous


# --- Judging ---------------------------------------------------------------------------


def evaluate(
    data: bytes, filename: str, duration: int, claims: list[Claim]
) -> dict[str, dict[str, Any]]:
    """Each claim's verdict (see the module); everything written is rolled back."""
    with transaction.atomic():
        editor = _editor()
        video = _video(duration)
        try:
            pinning.import_transcript(video=video, data=data, user=editor, filename=filename)
        except ValidationError as error:
            raise CommandError(f"TRANSCRIPT_FILE: {' '.join(error.messages)}") from None
        summary = Summary.objects.create(video=video, tldr="Statements to judge.")
        parts = {claim.id: _part(summary, position, claim) for position, claim in enumerate(claims)}
        # Saving a chapter pins the quotations of its body where they are best found.
        receipts.refresh_pins(summary=summary)
        results = {}
        for claim in claims:
            part = parts[claim.id]
            if claim.kind == "quote":
                part.refresh_from_db(fields=["quote_pins"])
                pin = part.quote_pins[0] if part.quote_pins else None
            else:
                pin = _pin_first_suggestion(summary, part, editor)
            results[claim.id] = verdict_of(pin)
        transaction.set_rollback(True)
    return results


def _editor() -> Any:
    group = Group.objects.filter(name=EDITORS).first()
    if group is None or not group.permissions.exists():
        raise CommandError(f"the migrations did not make the {EDITORS} group")
    user = get_user_model().objects.create_user(
        username=f"receipts-eval-{uuid.uuid4().hex[:8]}", is_staff=True
    )
    user.groups.add(group)
    # A fresh object: permissions cached before the group was added are not kept.
    return get_user_model().objects.get(pk=user.pk)


def _video(duration: int) -> Video:
    slug = f"receipts-eval-{uuid.uuid4().hex[:8]}"
    channel = Channel.objects.create(name="Receipts evaluation", slug=slug)
    return Video.objects.create(
        title="Receipts evaluation",
        slug=slug,
        channel=channel,
        source_url="https://www.youtube.com/watch?v=receiptseval",
        duration_seconds=duration,
        language="en",
        published_on=datetime.date.today(),
    )


def _part(summary: Summary, position: int, claim: Claim) -> Any:
    if claim.kind == "key_point":
        return KeyPoint.objects.create(
            summary=summary, position=position, title=claim.title, body=claim.text, time=claim.time
        )
    if claim.kind == "takeaway":
        return Takeaway.objects.create(
            summary=summary, position=position, text=claim.text, time=claim.time
        )
    if claim.kind == "caveat":
        return Caveat.objects.create(summary=summary, position=position, text=claim.text)
    if claim.kind == "chapter":
        return Chapter.objects.create(
            summary=summary,
            position=position,
            title=claim.title,
            body=claim.text,
            start_time=claim.time,
        )
    return Chapter.objects.create(
        summary=summary, position=position, title=claim.title, body=f"“{claim.text}”"
    )


def _pin_first_suggestion(summary: Summary, part: Any, editor: Any) -> dict[str, Any] | None:
    """The part pinned where the admin's first suggestion is (None: nothing suggested)."""
    spans = pinning.suggestions(summary=summary, part=part, limit=1)
    if not spans:
        return None
    span = spans[0]
    return pinning.set_pin(
        summary=summary, part=part, first=span.first_word, end=span.end_word, user=editor
    )


def verdict_of(pin: dict[str, Any] | None) -> dict[str, Any]:
    if pin is None or pin["status"] == pin_text.Status.NOT_FOUND.value:
        return {"status": pin_text.Status.NOT_FOUND.value, "time": None}
    said = pin.get("start")
    if pin["status"] == pin_text.Status.MIS_TIMED.value and pin.get("suggested_time") is not None:
        said = pin["suggested_time"]
    return {"status": pin["status"], "time": None if said is None else round(float(said), 2)}
