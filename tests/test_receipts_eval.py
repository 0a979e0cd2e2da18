"""manage.py receipts_eval: a transcript and statements in, each statement's verdict out,
on a database of its own that leaves nothing behind."""

import json
from unittest import mock

import pytest
from celery.app.task import Task
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from reversion.models import Revision

from summaries.models import Chapter, KeyPoint, Summary, Transcript, Video

WHISPER = {
    "segments": [
        {
            "start": 1.0,
            "end": 5.0,
            "text": " Welcome back. Today we compare GPUs with custom inference chips.",
            "speaker": "Ada",
        },
        {
            "start": 40.0,
            "end": 46.0,
            "text": " The H100 draws about 700 watts, and the chip we built draws 90 watts.",
            "speaker": "Ben",
        },
    ]
}
CLAIMS = [
    {"id": "q1", "kind": "quote", "text": "The H100 draws about 700 watts", "extra": 1},
    {
        "id": "ch1",
        "kind": "chapter",
        "title": "Welcome",
        "text": "Welcome back. Today we compare GPUs with custom inference chips.",
        "time": 1,
    },
    {"id": "kp1", "kind": "key_point", "text": "Bananas ripen faster in paper bags.", "time": 3},
]


def _files(tmp_path, claims_text=None):
    transcript = tmp_path / "talk.whisper.json"
    transcript.write_text(json.dumps(WHISPER))
    claims = tmp_path / "talk.claims.jsonl"
    claims.write_text(claims_text or "".join(json.dumps(c) + "\n" for c in CLAIMS))
    return transcript, claims, tmp_path / "out.json"


def _rows():
    models = (Video, Summary, Transcript, KeyPoint, Chapter, Revision, get_user_model())
    return {model.__name__: model.objects.count() for model in models}


@pytest.mark.django_db
def test_writes_each_statements_verdict_and_leaves_nothing_behind(tmp_path):
    transcript, claims, output = _files(tmp_path)
    before = _rows()
    with mock.patch.object(Task, "apply_async") as queued:
        call_command("receipts_eval", str(transcript), str(claims), str(output), verbosity=0)
    results = json.loads(output.read_text())
    assert set(results) == {"q1", "ch1", "kp1"}
    assert results["q1"]["status"] == "verbatim"
    assert results["q1"]["time"] == pytest.approx(40.0, abs=0.5)
    assert results["ch1"] == {"status": "verbatim", "time": pytest.approx(1.0, abs=0.5)}
    assert results["kp1"] == {"status": "not_found", "time": None}
    assert _rows() == before
    queued.assert_not_called()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "out.json",
        "talk.claims.jsonl",
        "talk.whisper.json",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"id": "x", "kind": "slogan", "text": "t"}', 'line 2 (x): "kind" must be one of'),
        ('{"id": "x", "kind": "quote", "text": ""}', 'line 2 (x): "text" must be'),
        ('{"id": "x", "kind": "quote", "text": "t", "time": "1:00"}', 'line 2 (x): "time"'),
        ('{"id": "q1", "kind": "quote", "text": "t"}', "line 2: the id 'q1' is used twice"),
    ],
)
def test_a_bad_claims_line_is_an_error_naming_it(tmp_path, line, message):
    transcript, claims, output = _files(tmp_path, json.dumps(CLAIMS[0]) + "\n" + line + "\n")
    with pytest.raises(
        CommandError, match=f"CLAIMS_JSONL {message}".replace("(", r"\(").replace(")", r"\)")
    ):
        call_command("receipts_eval", str(transcript), str(claims), str(output), verbosity=0)
    assert not output.exists()


@pytest.mark.django_db
def test_an_unreadable_transcript_is_an_error(tmp_path):
    transcript, claims, output = _files(tmp_path)
    transcript.write_bytes(b"00:00:01.000 nothing here")
    with pytest.raises(CommandError, match="TRANSCRIPT_FILE cannot be imported: "):
        call_command("receipts_eval", str(transcript), str(claims), str(output), verbosity=0)
    with pytest.raises(CommandError, match="TRANSCRIPT_FILE .*missing"):
        call_command(
            "receipts_eval", str(tmp_path / "missing"), str(claims), str(output), verbosity=0
        )
