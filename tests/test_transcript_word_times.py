"""Word times come from the file wherever it gives them, and are spread over a cue only
where it gives none.

Pure functions: no database.
"""

import json

from summaries.text.transcripts import parse_transcript, timed_words


def starts(data: bytes) -> list[tuple[float, str]]:
    return [(word.start, word.text) for word in timed_words(parse_transcript(data).segments)]


def json3(*events: dict) -> bytes:
    return json.dumps({"events": list(events)}).encode()


def test_a_json3_event_timed_by_its_first_offset_only_keeps_that_time():
    # Automatic captions (word offsets elsewhere in the file); this event's one word is
    # said two seconds after the event starts, and the file says so.
    data = json3(
        {"tStartMs": 1000, "dDurationMs": 5000, "segs": [{"utf8": "word", "tOffsetMs": 2000}]},
        {
            "tStartMs": 7000,
            "dDurationMs": 1000,
            "segs": [{"utf8": "a"}, {"utf8": " b", "tOffsetMs": 300}],
        },
    )

    assert starts(data) == [(3.0, "word"), (7.0, "a"), (7.3, "b")]


def test_a_json3_event_whose_later_segs_have_no_offset_keeps_its_first_offset():
    data = json3(
        {
            "tStartMs": 1000,
            "dDurationMs": 4000,
            "segs": [{"utf8": "late", "tOffsetMs": 1000}, {"utf8": " start"}],
        },
        {"tStartMs": 6000, "segs": [{"utf8": "x"}, {"utf8": " y", "tOffsetMs": 100}]},
    )

    assert starts(data)[0] == (2.0, "late")


def test_every_vtt_word_tag_is_kept_and_only_untagged_words_are_spread():
    data = (
        b"WEBVTT\n\n00:00:01.000 --> 00:00:05.000\n"
        b"hello<00:00:02.000><c> big world</c><00:00:04.000><c> end</c>\n\n"
        b"00:00:05.000 --> 00:00:09.000\nhello big world end\nalone\n\n"
        b"00:00:09.000 --> 00:00:12.000\nalone\nnext<00:00:10.500><c> one</c>\n"
    )

    found = starts(data)

    # The cue's first word at the cue's start, each tag's word at its tag; "world" shares
    # its tag's chunk with "big", so it is spread inside that chunk only.
    assert found[:2] == [(1.0, "hello"), (2.0, "big")]
    assert 2.0 < found[2][0] < 4.0 and found[3] == (4.0, "end")
    assert found[4:] == [(5.0, "alone"), (9.0, "next"), (10.5, "one")]


def test_whisper_word_times_are_kept_even_when_the_segment_starts_earlier():
    data = json.dumps(
        {
            "segments": [
                {
                    "start": 0,
                    "end": 10,
                    "text": "hello there",
                    "words": [
                        {"word": "hello", "start": 4, "end": 5},
                        {"word": "there", "start": 6, "end": 7},
                    ],
                }
            ]
        }
    ).encode()

    assert starts(data) == [(4.0, "hello"), (6.0, "there")]
