"""Transcript files as editors upload them: WebVTT (YouTube's auto-captions included),
SubRip, YouTube json3 and Whisper JSON read into segments and word times, and every file
that cannot be used refused with a message naming the line (or cue) to fix.

Pure functions: no database. The small files in tests/transcripts/ were written for these
tests; the long ones are generated (tests/transcript_files.py).
"""

import json
import random
from pathlib import Path

import pytest
import srt
import webvtt

from summaries.text import transcripts
from summaries.text.transcripts import (
    MAX_CUES,
    MAX_JSON_OBJECTS,
    ParsedTranscript,
    Segment,
    TranscriptError,
    TranscriptTooLarge,
    TranscriptTooLong,
    Word,
    parse_transcript,
    timed_words,
    words_written,
)
from tests import transcript_files
from tests.growth import assert_grows_linearly

FILES = Path(__file__).parent / "transcripts"


def read(name: str) -> bytes:
    return (FILES / name).read_bytes()


def rows(parsed: ParsedTranscript) -> list[tuple[float, float, str, str]]:
    return [(s.start, s.end, s.text, s.speaker) for s in parsed.segments]


def word_rows(segment: Segment) -> list[tuple[float, float, str]]:
    return [(w.start, w.end, w.text) for w in segment.words]


def refused(data: bytes | str, **kwargs) -> TranscriptError:
    if isinstance(data, str):
        data = data.encode()
    with pytest.raises(TranscriptError) as caught:
        parse_transcript(data, **kwargs)
    return caught.value


# WebVTT


def test_webvtt_cues_become_segments_with_their_speakers():
    parsed = parse_transcript(read("interview.vtt"), filename="interview.vtt")

    assert (parsed.format, parsed.encoding, parsed.warnings) == ("vtt", "utf-8", ())
    # Style and comment blocks skipped, the empty cue dropped, tags stripped (their words
    # kept), entities decoded, line breaks and indents collapsed to one space.
    assert rows(parsed) == [
        (
            1.0,
            4.2,
            "Welcome back. Today we're talking about how models are evaluated.",
            "Maya Chen",
        ),
        (4.5, 7.25, "Thanks for having me & my slides.", "Tomás Ruiz"),
        (8.0, 11.48, "So, what's wrong with benchmarks <today>?", "Maya Chen"),
        (11.6, 15.02, "They saturate — fast.", "Tomás Ruiz"),
    ]
    assert all(segment.words == () for segment in parsed.segments)


def test_webvtt_cues_are_read_as_webvtt_py_reads_them():
    ours = parse_transcript(read("interview.vtt")).segments
    theirs = [
        caption
        for caption in webvtt.from_string(read("interview.vtt").decode()).captions
        if caption.text.strip()
    ]

    assert [(s.start, s.end) for s in ours] == [
        (c.start_time.in_milliseconds() / 1000, c.end_time.in_milliseconds() / 1000) for c in theirs
    ]
    assert [s.speaker for s in ours] == [c.voice for c in theirs]


def test_youtube_auto_captions_give_each_word_once_with_its_time():
    parsed = parse_transcript(read("youtube_auto.vtt"))

    # Each line said comes out once: the line shown again above the next one and the 10 ms
    # snapshot cues are dropped; ">>" (a new speaker) is not a word.
    assert rows(parsed) == [
        (0.0, 2.31, "[Music]", ""),
        (2.32, 4.87, "hey everyone so today we're", ""),
        (4.88, 7.43, "looking at Q&A data", ""),
        (7.44, 9.99, "right right", ""),
        (10.0, 12.55, "right it works", ""),
    ]
    hey, looking, right, right_again = parsed.segments[1:]
    assert word_rows(hey) == [
        (2.32, 2.56, "hey"),
        (2.56, 2.96, "everyone"),
        (2.96, 3.2, "so"),
        (3.2, 3.52, "today"),
        (3.52, 4.87, "we're"),
    ]
    assert word_rows(looking) == [
        (4.88, 5.12, "looking"),
        (5.12, 5.29, "at"),
        (5.29, 5.76, "Q&A"),
        (5.76, 7.43, "data"),
    ]
    # Words said again are kept: only lines shown again are dropped.
    assert word_rows(right) == [(7.7, 8.01, "right"), (8.01, 9.99, "right")]
    assert word_rows(right_again) == [
        (10.0, 10.32, "right"),
        (10.32, 10.5, "it"),
        (10.5, 12.55, "works"),
    ]


def test_a_generated_auto_caption_file_loses_and_repeats_no_word():
    said = transcript_files.speech(0.5, seed=7)

    parsed = parse_transcript(transcript_files.make_auto_caption_vtt(0.5, seed=7))

    words = timed_words(parsed.segments)
    assert [(word.start, word.text) for word in words] == transcript_files.spoken_words(said)
    assert len(parsed.segments) == len(said)
    assert all(a.end <= b.start for a, b in zip(parsed.segments, parsed.segments[1:], strict=False))


def test_a_cue_said_twice_is_kept_twice():
    vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nNo.\n\n00:00:02.000 --> 00:00:03.000\nNo.\n"

    assert rows(parse_transcript(vtt.encode())) == [(1.0, 2.0, "No.", ""), (2.0, 3.0, "No.", "")]


def test_a_webvtt_file_without_its_header_is_read_from_its_name():
    text = b"00:00:01.000 --> 00:00:02.500\nHello there.\n"

    as_vtt = parse_transcript(text, filename="Clip.VTT")
    as_srt = parse_transcript(text, filename="clip.srt")

    assert (as_vtt.format, rows(as_vtt)) == ("vtt", [(1.0, 2.5, "Hello there.", "")])
    assert as_vtt.warnings == ('the file has no "WEBVTT" first line; it was read as WebVTT',)
    assert (as_srt.format, rows(as_srt), as_srt.warnings) == ("srt", rows(as_vtt), ())


def test_markup_is_stripped_and_entities_decoded_once():
    vtt = (
        "WEBVTT\n\n00:01.000 --> 00:02.000\n"
        "<b>AT&amp;T</b> said &lt;b&gt; is not a tag, 3 &lt; 4 &amp;amp; "
        "<ruby>漢<rt>kan</rt></ruby>\n"
    )

    (segment,) = parse_transcript(vtt.encode()).segments

    assert segment.text == "AT&T said <b> is not a tag, 3 < 4 &amp; 漢kan"


def test_a_character_reference_too_long_to_be_one_stays_as_written():
    reference = "&#" + "7" * 5000 + ";"
    vtt = f"WEBVTT\n\n00:01.000 --> 00:02.000\n<v {reference}>Hi {reference} &#8212;\n"

    (segment,) = parse_transcript(vtt.encode()).segments

    assert (segment.text, segment.speaker) == (f"Hi {reference} —", reference)


# SubRip


def test_subrip_cues_become_segments():
    parsed = parse_transcript(read("lecture.srt"), filename="lecture.srt")

    assert (parsed.format, parsed.encoding) == ("srt", "utf-8")
    # "HOST:" starts two cues: a speaker label. "Step one:" is not one. An empty line
    # inside cue 4 does not end it. Tags and {\an8} codes are stripped.
    assert rows(parsed) == [
        (0.5, 3.25, "Our guest today builds evaluation suites for a living.", "HOST"),
        (3.4, 6.0, "Thank you. It's good to be here.", ""),
        (6.1, 9.8, "Let's start with the basics: what is a held-out set?", "HOST"),
        (10.0, 13.5, "Data the model never saw. That's the whole idea.", ""),
        (13.6, 16.0, "Step one: split early.", ""),
    ]


def test_subrip_cues_are_read_as_the_srt_library_reads_them():
    ours = parse_transcript(read("lecture.srt")).segments
    theirs = list(srt.parse(read("lecture.srt").decode()))

    assert [(s.start, s.end) for s in ours] == [
        (sub.start.total_seconds(), sub.end.total_seconds()) for sub in theirs
    ]


def test_a_label_starting_one_cue_only_is_not_taken_for_a_speaker():
    text = "1\n00:00:01,000 --> 00:00:02,000\nAI: the next platform\n\n"
    text += "2\n00:00:02,000 --> 00:00:03,000\nMARY: or not.\n"

    assert [s.speaker for s in parse_transcript(text.encode()).segments] == ["", ""]
    assert parse_transcript(text.encode()).segments[0].text == "AI: the next platform"


def test_rolling_subrip_from_auto_captions_gives_each_line_once():
    parsed = parse_transcript(read("rolling.srt"))

    # Each cue shows the line before it again and overlaps it by two seconds: not an error.
    assert rows(parsed) == [
        (0.0, 2.0, "the tokenizer splits text", ""),
        (2.0, 4.0, "into pieces the model reads", ""),
        (4.0, 8.0, "and rare words cost more", ""),
    ]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_windows_and_old_mac_line_breaks_read_the_same(newline):
    data = read("lecture.srt").decode().replace("\n", newline).encode()

    assert rows(parse_transcript(data)) == rows(parse_transcript(read("lecture.srt")))
    broken = read("lecture.srt").decode().replace("00:00:06,100", "00:00:06,1x0")
    assert refused(broken.replace("\n", newline)).line == 11


# YouTube json3


def test_json3_events_become_segments_with_word_times():
    parsed = parse_transcript(read("talk.json3"), filename="talk.json3")

    assert parsed.format == "json3"
    # The window event and the line-break events are skipped; an event stays on screen
    # until the line after next, so each ends where the next starts.
    assert rows(parsed) == [
        (0.24, 2.4, "what surprised me most", ""),
        (2.4, 4.8, "was how cheap inference got", ""),
        (4.8, 7.2, "[Applause]", ""),
        (7.3, 8.8, "thanks everyone", ""),
    ]
    what, was, applause, thanks = parsed.segments
    assert word_rows(what) == [
        (0.24, 0.56, "what"),
        (0.56, 1.04, "surprised"),
        (1.04, 1.2, "me"),
        (1.2, 2.4, "most"),
    ]
    assert word_rows(was)[-1] == (3.84, 4.8, "got")
    assert applause.words == ()
    assert word_rows(thanks) == [(7.3, 7.7, "thanks"), (7.7, 8.8, "everyone")]


def test_generated_json3_gives_the_words_of_the_same_speech():
    said = transcript_files.speech(0.5, seed=11)

    parsed = parse_transcript(transcript_files.make_auto_caption_json3(0.5, seed=11))

    assert [(w.start, w.text) for w in timed_words(parsed.segments)] == (
        transcript_files.spoken_words(said)
    )


def test_json3_of_uploaded_captions_has_no_word_times():
    document = {
        "events": [
            {"tStartMs": 1000, "dDurationMs": 2000, "segs": [{"utf8": "First line\nof two"}]},
            {"tStartMs": 3500, "segs": [{"utf8": "No duration."}]},
        ]
    }

    parsed = parse_transcript(json.dumps(document).encode())

    assert rows(parsed) == [(1.0, 3.0, "First line of two", ""), (3.5, 3.5, "No duration.", "")]
    assert parsed.segments[0].words == ()


# Whisper


def test_whisper_segments_keep_their_words_and_speakers():
    parsed = parse_transcript(read("whisper.json"))

    assert parsed.format == "whisper"
    assert rows(parsed) == [
        (0.0, 3.52, "Reward models are trained on human preferences.", "SPEAKER_00"),
        (3.52, 7.25, "In 2023 that meant about forty thousand comparisons.", "SPEAKER_01"),
    ]
    assert word_rows(parsed.segments[0])[:2] == [(0.0, 0.42, "Reward"), (0.42, 0.88, "models")]
    # "2023" has no times (WhisperX leaves numbers unaligned): it fills the gap.
    assert word_rows(parsed.segments[1])[:3] == [
        (3.6, 3.74, "In"),
        (3.74, 4.52, "2023"),
        (4.52, 4.7, "that"),
    ]


def test_whisper_words_without_times_share_the_gap_they_are_in():
    words = [
        {"word": "In", "start": 3.6, "end": 3.74},
        {"word": "2023"},
        {"word": "GPT-4", "end": 4.9},
        {"word": "shipped", "start": 5.0},
        {"word": "early", "start": 4.8, "end": 5.9},
        {"word": "on."},
    ]
    document = {"segments": [{"start": 3.5, "end": 5.8, "text": "x", "words": words}]}

    (segment,) = parse_transcript(json.dumps(document).encode()).segments

    # By length between the words around; a start before the one before moved up to it;
    # nothing past the segment's end.
    assert word_rows(segment) == [
        (3.6, 3.74, "In"),
        (3.74, 4.313, "2023"),
        (4.313, 5.0, "GPT-4"),
        (5.0, 5.0, "shipped"),
        (5.0, 5.8, "early"),
        (5.8, 5.8, "on."),
    ]


def test_whisper_as_a_bare_list_with_text_words_and_rounded_times():
    document = [
        {"start": 0.12345, "end": 1.5, "text": "  Hello\n world ", "speaker": 1},
        {
            "start": 1.5,
            "end": 2.0,
            "text": "",
            "words": [{"text": " again", "start": 1.6, "end": 1.9}],
        },
    ]

    parsed = parse_transcript(json.dumps(document).encode(), filename="out.json")

    assert rows(parsed) == [(0.123, 1.5, "Hello world", "1"), (1.5, 2.0, "again", "")]
    assert parsed.segments[1].words == (Word(1.6, 1.9, "again"),)


def test_parsed_segments_survive_the_stored_json():
    for name in ("youtube_auto.vtt", "whisper.json", "lecture.srt"):
        for segment in parse_transcript(read(name)).segments:
            assert Segment.from_json(json.loads(json.dumps(segment.as_json()))) == segment


# Encodings


@pytest.mark.parametrize(
    ("encode", "encoding"),
    [
        (lambda text: b"\xef\xbb\xbf" + text.encode(), "utf-8-sig"),
        (lambda text: b"\xff\xfe" + text.encode("utf-16-le"), "utf-16-le"),
        (lambda text: b"\xfe\xff" + text.encode("utf-16-be"), "utf-16-be"),
        (lambda text: text.encode("utf-16-le"), "utf-16-le"),
        (lambda text: text.encode("utf-16-be"), "utf-16-be"),
        (lambda text: text.encode("utf-16"), "utf-16-le"),  # Python writes a mark first
    ],
    ids=["utf-8 bom", "utf-16le bom", "utf-16be bom", "utf-16le", "utf-16be", "utf-16"],
)
def test_unicode_encodings_are_recognised(encode, encoding):
    text = read("interview.vtt").decode()

    parsed = parse_transcript(encode(text))

    assert parsed.encoding == encoding
    assert rows(parsed) == rows(parse_transcript(read("interview.vtt")))


def test_windows_1252_is_read_when_the_bytes_are_not_utf8():
    text = "1\n00:00:01,000 --> 00:00:03,000\nJosé said “déjà vu” – twice.\n"

    parsed = parse_transcript(text.encode("cp1252"))

    assert (parsed.encoding, parsed.segments[0].text) == ("cp1252", "José said “déjà vu” – twice.")
    assert parsed.warnings == (
        "the file is not UTF-8; it was read as Windows-1252 (Western European), so check "
        "accented letters and quotes",
    )


def test_latin1_is_read_when_windows_1252_cannot_be():
    data = "1\n00:00:01,000 --> 00:00:03,000\nCafé \x8d\n".encode("latin-1")

    parsed = parse_transcript(data)

    assert (parsed.encoding, parsed.segments[0].text) == ("latin-1", "Café \x8d")


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 4,
        b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41",
        random.Random(3).randbytes(3000),
        bytes(random.Random(4).choice(range(1, 32)) for _ in range(500)),
        b"\xff\xfe" + b"\x00\xd8" * 10,  # UTF-16 with a broken surrogate
    ],
    ids=["png", "mp4", "random", "control characters", "broken utf-16"],
)
def test_binary_files_are_not_text(data):
    assert refused(data).message.startswith(("not a text file", "the file starts with the mark"))


# Refused files


@pytest.mark.parametrize("data", [b"", b"  \n\n \t\n", b"\xef\xbb\xbf", b"\xff\xfe"])
def test_an_empty_file_is_refused(data):
    assert refused(data).message == "the file is empty"


def test_a_file_over_the_limit_is_too_large_with_the_limit_named():
    error = refused(read("lecture.srt"), max_bytes=100)

    assert isinstance(error, TranscriptTooLarge)
    assert str(error) == (
        f"the file is {len(read('lecture.srt')):,} bytes, larger than the limit of 100 bytes"
    )
    assert refused(b"x" * 2_000_001, max_bytes=2_000_000).message == (
        "the file is 2,000,001 bytes, larger than the limit of 2,000,000 bytes (2.0 MB)"
    )
    assert (error.max_bytes, error.line) == (100, None)
    assert parse_transcript(read("lecture.srt"), max_bytes=len(read("lecture.srt"))).segments


CUE = "00:00:01.000 --> 00:00:02.000\nFirst.\n\n"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            f"WEBVTT\n\n{CUE}00:00:05.000 --> 00:00:03.000\nSecond.\n",
            6,
            "line 6: cue end 00:00:03.000 is before its start 00:00:05.000",
        ),
        (
            f"WEBVTT\n\n{CUE}00:00:0x.000 --> 00:00:04.000\nSecond.\n",
            6,
            "line 6: broken timestamp '00:00:0x.000': expected "
            "hours:minutes:seconds.milliseconds such as 00:01:03.000",
        ),
        (
            f"WEBVTT\n\n{CUE}00:00:03.000 --> 00:75:04.000\nSecond.\n",
            6,
            "line 6: broken timestamp '00:75:04.000': expected "
            "hours:minutes:seconds.milliseconds such as 00:01:03.000",
        ),
        (
            f"WEBVTT\n\n{CUE}00:00:03.000 -->\nSecond.\n",
            6,
            "line 6: the cue end time is missing around -->",
        ),
        (
            f"WEBVTT\n\n{CUE}00:00:03.000 -> 00:00:04.000\nSecond.\n",
            6,
            "line 6: broken timing line '00:00:03.000 -> 00:00:04.000': expected a start and an "
            "end time joined by -->, such as 00:00:01.000 --> 00:00:04.000",
        ),
        (
            f"WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nFirst.\n\n{CUE}",
            6,
            "line 6: the cue starts at 00:00:01.000, before the cue before it "
            "(line 3, 00:00:05.000): cues must be in time order",
        ),
        (
            "WEBVTT\n\n00:00:01.000 --> 00:00:03.500\nFirst.\n\n"
            "00:00:02.000 --> 00:00:04.000\nSecond.\n",
            6,
            "line 6: the cue starts at 00:00:02.000, 1.500 s before the cue before it ends "
            "(line 3, 00:00:03.500); cues may overlap by 1 s at most",
        ),
        (
            "1\n00:00:01,000 --> 00:00:02,000\nFirst.\n\n2\n00:00:03,000 - 00:00:04,000\nSecond.\n",
            6,
            "line 6: cue 2 has no timing line: expected a line such as "
            "00:00:01,000 --> 00:00:04,000, found '00:00:03,000 - 00:00:04,000'",
        ),
        (
            "Subtitles by the team\n\n1\n00:00:01,000 --> 00:00:02,000\nFirst.\n",
            1,
            "line 1: expected a cue, which starts with a timing line such as "
            "00:00:01.000 --> 00:00:04.000; found 'Subtitles by the team'",
        ),
        (
            "WEBVTT\n\n00:00:01.000 --> 400:00:00.000\nFirst.\n",
            3,
            "line 3: the cue end '400:00:00.000' is past 100 hours",
        ),
    ],
    ids=[
        "end before start",
        "broken timestamp",
        "minutes past 59",
        "missing end",
        "broken arrow",
        "out of order",
        "overlap",
        "srt cue without timing",
        "text before the first cue",
        "past 100 hours",
    ],
)
def test_a_broken_caption_file_is_refused_naming_its_line(text, line, message):
    error = refused(text)

    assert (str(error), error.line) == (message, line)
    assert isinstance(error, ValueError)


def test_cues_overlapping_by_a_second_or_less_are_accepted():
    text = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nFirst.\n\n00:00:02.000 --> 00:00:04.000\nNext.\n"
    )

    assert rows(parse_transcript(text.encode())) == [
        (1.0, 3.0, "First.", ""),
        (2.0, 4.0, "Next.", ""),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "WEBVTT\nKind: captions\n\nNOTE nothing yet\n",
            "no cue in the file: a caption file holds cues that start with a timing line such "
            "as 00:00:01.000 --> 00:00:04.000",
        ),
        (
            "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<i></i>\n\n00:00:03.000 --> 00:00:04.000\n",
            "every cue of the file is empty: there is no text to import",
        ),
        (
            "Just some notes about the talk.\n",
            "not a transcript: expected WebVTT (a first line WEBVTT), SubRip (numbered cues "
            "with times such as 00:00:01,000 --> 00:00:04,000), YouTube json3 or Whisper JSON",
        ),
        (
            '{"title": "talk", "items": []}',
            'a JSON file, but not a transcript: expected YouTube json3 (an "events" list) or '
            'Whisper JSON (a "segments" list)',
        ),
        ('{"events": [{"id": 1}]}', "no event of the file has text: there is nothing to import"),
        ("[]", "no segment of the file has text: there is nothing to import"),
    ],
    ids=["no cue", "empty cues", "not a transcript", "other json", "no json3 text", "no segment"],
)
def test_a_file_without_text_to_import_is_refused(text, message):
    assert refused(text).message == message


def test_invalid_json_is_refused_with_its_line_and_column():
    text = '{"events": [\n  {"tStartMs": 0,, "segs": []}\n]}'

    error = refused(text, filename="talk.json3")

    assert (str(error), error.line) == (
        "line 2, column 18: not valid JSON (Expecting property name enclosed in double quotes)",
        2,
    )
    assert refused("{not json", filename="x.json").line == 1


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"events": [{"tStartMs": "0", "segs": [{"utf8": "a"}]}]},
            "event 1: \"tStartMs\" is '0', not a number",
        ),
        (
            {"events": [{"tStartMs": 0, "segs": [{"utf8": "a", "tOffsetMs": -5}]}]},
            'event 1, seg 1: "tOffsetMs" is -5, not a time in a video',
        ),
        ({"events": [{}, 7]}, "event 2: 7, not an object"),
        ({"events": {"tStartMs": 0}}, '"events" is an object, not a list'),
        (
            {"events": [{"tStartMs": 0, "segs": [{"utf8": None}]}]},
            'event 1, seg 1: "utf8" is None, not text',
        ),
        (
            {
                "events": [
                    {"tStartMs": 5000, "dDurationMs": 1000, "segs": [{"utf8": "b"}]},
                    {"tStartMs": 1000, "dDurationMs": 1000, "segs": [{"utf8": "a"}]},
                ]
            },
            "event 2 starts at 00:00:01.000, before event 1 (00:00:05.000): they must be in "
            "time order",
        ),
        (
            {"segments": [{"start": 0, "end": 2}, {"start": 3, "end": 2.5, "text": "x"}]},
            "segment 2: end 00:00:02.500 is before its start 00:00:03.000",
        ),
        (
            {"segments": [{"start": 0, "end": True, "text": "x"}]},
            'segment 1: "end" is True, not a number',
        ),
        ({"segments": [{"start": 0, "text": "x"}]}, 'segment 1: "end" is None, not a number'),
        (
            {"segments": [{"start": 1e400, "end": 1, "text": "x"}]},
            'segment 1: "start" is inf, not a time in a video',
        ),
        (
            {
                "segments": [
                    {"start": 0, "end": 4, "text": "a"},
                    {"start": 2, "end": 5, "text": "b"},
                ]
            },
            "segment 2 starts at 00:00:02.000, 2.000 s before segment 1 ends (00:00:04.000); "
            "they may overlap by 1 s at most",
        ),
        (
            {"segments": [{"start": 0, "end": 1, "text": "a", "words": [{"word": 5}]}]},
            'segment 1, word 1: "word" is 5, not text',
        ),
        (
            {"segments": [{"start": 0, "end": 1, "text": "a", "speaker": ["x"]}]},
            'segment 1: "speaker" is a list, not text',
        ),
    ],
    ids=[
        "json3 start as text",
        "json3 negative offset",
        "json3 event not an object",
        "json3 events not a list",
        "json3 text not text",
        "json3 out of order",
        "whisper end before start",
        "whisper boolean time",
        "whisper missing end",
        "whisper infinite time",
        "whisper overlap",
        "whisper word not text",
        "whisper speaker a list",
    ],
)
def test_a_broken_json_transcript_is_refused_naming_its_event_or_segment(document, message):
    text = json.dumps(document).replace("Infinity", "1e400")

    assert refused(text).message == message


# Duration


@pytest.mark.parametrize(
    ("duration", "warned"),
    [
        (100.0, False),
        (70.0, False),
        (69.9, True),
        (5.0, True),
        (-10.0, False),
        (float("nan"), False),
    ],
)
def test_a_transcript_running_past_the_video_is_accepted_with_a_warning(duration, warned):
    cues = "1\n00:00:01,000 --> 00:00:05,000\nFirst.\n\n2\n00:01:30,000 --> 00:01:40,000\nLast.\n"

    parsed = parse_transcript(cues.encode(), duration=duration)

    assert rows(parsed) == [(1.0, 5.0, "First.", ""), (90.0, 100.0, "Last.", "")]
    assert bool(parsed.warnings) is warned


def test_the_warning_allows_five_percent_of_a_long_video():
    cue = "1\n{start} --> {end}\nThe last words.\n"
    late = cue.format(start="01:02:50,000", end="01:02:59,000").encode()  # 179 s past 1 hour

    assert parse_transcript(late, duration=3600).warnings == ()
    assert parse_transcript(late, duration=3400).warnings == (
        "the transcript runs to 01:02:59.000, 379 s past the end of the video "
        "(00:56:40.000): is it the transcript of this video?",
    )


# Hostile input: each parse stays linear in the size of the file. The bounds are on this
# process's CPU time, so that other work on a busy machine does not make them fail.


def outcome(data: bytes, **kwargs) -> ParsedTranscript | TranscriptError:
    try:
        return parse_transcript(data, **kwargs)
    except TranscriptError as error:
        return error


# A parser quadratic in the length of a line would take hours on a megabyte; a linear one
# reads it in well under a second. Each test also reads a quarter of it, to see how the
# time grows (tests/growth.py).
ONE_MB = 1_000_000
VTT_CUE = b"WEBVTT\n\n00:00.000 --> 00:01.000\n"
SRT_CUE = b"1\n00:00:00,000 --> 00:00:01,000\n"

# Each file is built in its test only, from its size in bytes (or objects).
ONE_LONG_LINE = {
    "unclosed tags": lambda n: VTT_CUE + b"<" * n,
    "unclosed voice tags": lambda n: VTT_CUE + b"<v " * (n // 3),
    "word times": lambda n: VTT_CUE + b"<00:00:00.500><c> a</c>" * (n // 23),
    "ampersands": lambda n: VTT_CUE + b"&#" * (n // 2),
    "a long character reference": lambda n: VTT_CUE + b"&#" + b"1" * n,
    "spaces then a word": lambda n: VTT_CUE + b" " * n + b"x",
    "digits in srt": lambda n: SRT_CUE + b"0" * n,
    "spaces before srt": lambda n: b" " * n + b"\n" + SRT_CUE + b"x\n",
    "a long speaker label": lambda n: SRT_CUE + b"A" * n + b": hi",
    "a long timing line": lambda n: b"WEBVTT\n\n00:00.000 --> " + b"1" * n,
    "arrows": lambda n: b"WEBVTT\n\n" + b"--> " * (n // 4),
    "json text": lambda n: b'[{"start": 0, "end": 1, "text": "' + b"word " * (n // 5) + b'"}]',
    "json words without times": lambda n: (
        b'[{"start": 0, "end": 9, "text": "w", "words": ['
        + b",".join([b'{"word": "w"}'] * (n * MAX_JSON_OBJECTS // ONE_MB // 4))
        + b"]}]"
    ),
    "no format": lambda n: b"a" * n,
}


@pytest.mark.parametrize("build", ONE_LONG_LINE.values(), ids=ONE_LONG_LINE.keys())
def test_a_file_of_one_long_line_is_read_in_linear_time(build):
    assert_grows_linearly(outcome, build, ONE_MB)


NESTED = {
    "nested lists": lambda n: b"[" * n,
    "nested in events": lambda n: b'{"events": ' + b"[" * (n // 10),
    "nested words": lambda n: (
        b'{"segments": [{"start": 0, "end": 1, "text": "a", "words": '
        + b"[" * (n // 2000)
        + b"]" * (n // 2000)
        + b"}]}"
    ),
}


@pytest.mark.parametrize("build", NESTED.values(), ids=NESTED.keys())
def test_deeply_nested_json_is_refused_in_linear_time(build):
    error = assert_grows_linearly(outcome, build, 1_000_000)

    assert isinstance(error, TranscriptError)
    assert error.message in (
        "not a transcript: the JSON is nested too deeply",
        "segment 1, word 1: a list, not an object",
    )


def srt_cues(n: int) -> bytes:
    return b"".join(b"%d\n00:00:00,000 --> 00:00:00,001\nw\n\n" % i for i in range(n))


def json3_events(n: int) -> bytes:
    events = b",".join(b'{"tStartMs":%d,"segs":[{"utf8":"w"}]}' % i for i in range(n))
    return b'{"events":[' + events + b"]}"


TOO_MANY_CUES = f"the file has 1,000,000 cues, more than the {MAX_CUES:,} a transcript may have"
TOO_MANY = {
    "srt": (srt_cues, TOO_MANY_CUES),
    "vtt": (lambda n: b"WEBVTT\n\n" + srt_cues(n), TOO_MANY_CUES),
    "json3": (
        json3_events,
        f"the file has 2,000,001 JSON objects, more than the {MAX_JSON_OBJECTS:,} a "
        "transcript may have",
    ),
}


@pytest.mark.parametrize(("build", "message"), TOO_MANY.values(), ids=TOO_MANY.keys())
def test_a_million_tiny_cues_are_refused_in_linear_time(build, message):
    error = assert_grows_linearly(outcome, build, 1_000_000)

    assert isinstance(error, TranscriptError)
    assert error.message == message


def test_as_many_tiny_cues_as_allowed_are_read_in_linear_time():
    parsed = assert_grows_linearly(outcome, transcript_files.tiny_vtt_cues, MAX_CUES)

    assert isinstance(parsed, ParsedTranscript)
    assert len(parsed.segments) == MAX_CUES
    last = (MAX_CUES - 1) * 5
    assert parsed.segments[-1] == Segment(last / 1000, (last + 4) / 1000, f"w{MAX_CUES - 1}")


def test_as_many_json_events_as_allowed_are_read_in_linear_time():
    parsed = assert_grows_linearly(outcome, transcript_files.json3_tiny_events, MAX_CUES)

    assert isinstance(parsed, ParsedTranscript)
    assert len(parsed.segments) == MAX_CUES


# Fuzzing: whatever the bytes, a transcript or a TranscriptError.

MUTATIONS = [b"-->", b"\n", b"\n\n", b"<", b">", b"&", b":", b"{", b"}", b"[", b"\x00", b"\xff"]
MUTATIONS += [b"00:00:01.000", b"99:99:99,999", b'"', b",", b"-1", b"1e999", b"\xe9", b"<v ", b" "]


def mutated(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data) + 1)
        choice = rng.randrange(4)
        if choice == 0:
            data = data[:at] + data[at + rng.randint(1, 40) :]
        elif choice == 1:
            data = data[:at] + rng.choice(MUTATIONS) + data[at:]
        elif choice == 2:
            data = data[:at] + rng.randbytes(rng.randint(1, 8)) + data[at:]
        else:
            piece = data[at : at + rng.randint(1, 200)]
            data = data[:at] + piece + data[at:]
    return data


def assert_well_formed(parsed: ParsedTranscript) -> None:
    assert parsed.format in transcripts.FORMATS
    assert parsed.segments
    for before, segment in zip((None, *parsed.segments), parsed.segments, strict=False):
        assert 0 <= segment.start <= segment.end
        assert segment.text and segment.text == " ".join(segment.text.split())
        if before is not None:
            assert before.start <= segment.start
        for word in segment.words:
            assert segment.start <= word.start <= word.end <= segment.end
            assert word.text and not any(c.isspace() for c in word.text)
        assert [w.start for w in segment.words] == sorted(w.start for w in segment.words)


@pytest.mark.parametrize("name", sorted(path.name for path in FILES.iterdir()))
def test_mutated_files_give_a_transcript_or_a_transcript_error(name):
    rng = random.Random(name)
    original = read(name)
    for _ in range(400):
        data = mutated(original, rng)
        parsed = outcome(data, filename=name, duration=10.0)
        if isinstance(parsed, TranscriptError):
            assert parsed.message and (parsed.line is None or parsed.line >= 1)
        else:
            assert_well_formed(parsed)


def test_random_bytes_give_a_transcript_error():
    rng = random.Random(5)
    for size in [1, 2, 3, 7, 64, 500, 4096] * 30:
        with pytest.raises(TranscriptError):
            parse_transcript(rng.randbytes(size))


# Coverage and gaps


def cues(*spans: tuple[float, float]) -> bytes:
    out = ["WEBVTT", ""]
    for number, (start, end) in enumerate(spans, start=1):
        out += [f"{clock(start)} --> {clock(end)}", f"Words of cue {number}.", ""]
    return "\n".join(out).encode()


def clock(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    return f"00:{int(minutes):02d}:{secs:06.3f}"


def test_a_transcript_ending_well_before_the_video_is_accepted_with_a_warning():
    parsed = parse_transcript(cues((1, 100), (200, 315)), duration=983)

    assert len(parsed.segments) == 2
    assert parsed.warnings == (
        "the transcript ends at 5:15 of a 16:23 video (32 %): it may be cut short",
    )


@pytest.mark.parametrize(
    ("last", "duration", "warned"),
    [
        (885, 983, False),  # 90 % of the video
        (884, 983, True),
        (50, 75, False),  # under 90 %, but less than 30 s short: an outro
        (40, 75, True),
    ],
)
def test_the_coverage_warning_allows_the_last_tenth_and_thirty_seconds(last, duration, warned):
    spans = [(start, start + 10) for start in range(0, last - 10, 100)] + [(last - 10, last)]

    warnings = parse_transcript(cues(*spans), duration=duration).warnings

    assert any("may be cut short" in warning for warning in warnings) is warned


def test_a_gap_of_two_minutes_between_cues_is_named_in_a_warning():
    parsed = parse_transcript(cues((1, 190), (400, 410), (410, 529), (530, 600)))

    assert parsed.warnings == (
        "no words between 3:10 and 6:40: is part of the transcript missing?",
    )


def test_gaps_past_the_first_five_are_counted():
    spans = [(start, start + 5) for start in range(0, 3000, 200)]  # 15 gaps of 195 s

    warnings = parse_transcript(cues(*spans)).warnings

    assert len(warnings) == 6
    assert warnings[0] == "no words between 0:05 and 3:20: is part of the transcript missing?"
    assert warnings[-1] == ("9 more gaps of 2 minutes or more without words, the last up to 46:40")


def test_a_whole_transcript_of_the_video_has_no_warning():
    spans = [(start, start + 8) for start in range(0, 980, 8)]

    assert parse_transcript(cues(*spans), duration=983).warnings == ()


# Words


@pytest.mark.parametrize("text", ["", "  \n", "one", "a b  c\n\td ", "x" * 200_000, "ab " * 50_000])
def test_words_written_counts_as_split_does_a_slice_at_a_time(text):
    assert words_written(text) == len(text.split())


def test_a_file_of_millions_of_words_in_one_cue_is_refused_before_it_is_read():
    assert len(transcript_files.one_cue_of_words(9_500_000)) < 20 * 1024 * 1024

    error = assert_grows_linearly(
        lambda data: refused(data, max_words=250_000), transcript_files.one_cue_of_words, 9_500_000
    )

    assert isinstance(error, TranscriptTooLong)
    assert error.message == (
        "the file holds 9,500,004 words (its times and markup included), more than the "
        "250,000 words a transcript may have; split it, or import the part the summary is about"
    )


def test_the_words_said_are_counted_once_the_file_is_read():
    # 160 words said in 40 cues, written with twice as many words (the timing lines): under
    # eight times the limit, so the file is read, and then refused for its words said.
    data = cues(*[(10 * n, 10 * n + 9) for n in range(40)])

    assert parse_transcript(data, max_words=160).segments
    error = refused(data, max_words=119)
    assert isinstance(error, TranscriptTooLong) and (error.words, error.max_words) == (160, 119)
    assert error.message.startswith("the transcript has 160 words, more than the 119 words")


def test_a_long_auto_caption_file_under_the_limit_is_read():
    data = transcript_files.make_auto_caption_vtt(3, seed=1)  # ~30,000 words said

    parsed = parse_transcript(data, max_words=31_000)

    assert sum(len(segment.text.split()) for segment in parsed.segments) > 29_000
