"""Speaker labels of caption files, in every style SubRip and WebVTT files write them,
become the segments' speakers and leave the text; sound notes stay in the text.

Pure functions: no database.
"""

from summaries.text.transcripts import Segment, parse_transcript


def srt(*cues: str) -> bytes:
    """A SubRip file of `cues` (each its text lines), two seconds a cue."""
    blocks = []
    for number, text in enumerate(cues, start=1):
        start, end = 2 * (number - 1), 2 * number
        blocks.append(f"{number}\n00:00:{start:02d},000 --> 00:00:{end:02d},000\n{text}\n")
    return "\n".join(blocks).encode()


def turns(data: bytes) -> list[tuple[str, str, bool]]:
    return [(s.speaker, s.text, s.turn) for s in parse_transcript(data).segments]


def test_mixed_case_names_said_twice_are_speakers():
    data = srt(
        "Jo: Hello there.", "Dr. Smith: Good morning.", "Jo: How are you?", "Dr. Smith: Well."
    )

    assert turns(data) == [
        ("Jo", "Hello there.", False),
        ("Dr. Smith", "Good morning.", False),
        ("Jo", "How are you?", False),
        ("Dr. Smith", "Well.", False),
    ]


def test_a_sentence_with_a_colon_is_no_speaker_even_twice():
    data = srt("Step one: split early.", "Step one: split early again.")

    assert [speaker for speaker, _, _ in turns(data)] == ["", ""]


def test_a_bare_speaker_change_splits_the_cue_without_inventing_a_name():
    # ">>" marks a new speaker without naming them: the reader page starts a paragraph, so
    # the segment is split and marked as a turn; no "Speaker 2" is made up, since a third
    # voice or the first one coming back would be named wrongly.
    data = srt(">> so what did you find", "we found it was fast >> really fast?")

    assert turns(data) == [
        ("", "so what did you find", True),
        ("", "we found it was fast", False),
        ("", "really fast?", True),
    ]
    third = parse_transcript(data).segments[2]
    assert 2.0 < third.start < third.end == 4.0


def test_a_named_speaker_change():
    data = srt(">> ANNA: Welcome back.", ">> BEN: Thanks for having me.")

    assert turns(data) == [("ANNA", "Welcome back.", True), ("BEN", "Thanks for having me.", True)]


def test_dialogue_dashes_split_a_cue_between_two_speakers():
    data = srt("- Are you ready?\n- I think so.", "Then let's go.")

    parsed = parse_transcript(data).segments
    assert turns(data) == [
        ("", "Are you ready?", True),
        ("", "I think so.", True),
        ("", "Then let's go.", False),
    ]
    assert parsed[0].start == 0.0 and parsed[0].end == parsed[1].start and parsed[1].end == 2.0


def test_a_dash_and_a_label_together():
    data = srt("- ANNA: Ready?\n- BEN: Yes.")

    assert turns(data) == [("ANNA", "Ready?", True), ("BEN", "Yes.", True)]


def test_bracketed_names_are_speakers_and_sound_notes_stay():
    data = srt(
        "[Jo] We shipped it.",
        "[Music]",
        "[SAM]: Did it work?",
        "[laughs] It did.",
        "[Jo] Mostly.",
        "[Applause]",
        "[SAM]: Good.",
    )

    assert turns(data) == [
        ("Jo", "We shipped it.", False),
        ("", "[Music]", False),
        ("SAM", "Did it work?", False),
        ("", "[laughs] It did.", False),
        ("Jo", "Mostly.", False),
        ("", "[Applause]", False),
        ("SAM", "Good.", False),
    ]


def test_a_bracketed_word_once_is_a_note():
    assert turns(srt("[Inaudible] then we stopped", "and that was it")) == [
        ("", "[Inaudible] then we stopped", False),
        ("", "and that was it", False),
    ]


def test_speaker_changes_in_auto_captions_split_the_timed_words():
    data = (
        b"WEBVTT\n\n"
        b"00:00:01.000 --> 00:00:04.000\n"
        b"so<00:00:01.500><c> it</c><00:00:02.000><c> works</c>"
        b"<00:00:02.500><c> >></c><00:00:03.000><c> does</c><00:00:03.500><c> it</c>\n"
    )

    segments = parse_transcript(data).segments

    assert [(s.text, s.turn) for s in segments] == [("so it works", False), ("does it", True)]
    assert [w.start for w in segments[1].words] == [3.0, 3.5]
    assert segments[0].end == 3.0


def test_a_turn_survives_the_stored_json():
    segment = Segment(1.0, 2.0, "yes", "", turn=True)

    assert Segment.from_json(segment.as_json()) == segment
    assert "turn" not in Segment(1.0, 2.0, "yes").as_json()


def test_a_sentence_before_a_colon_after_a_turn_mark_is_not_a_speaker():
    srt = (
        b"1\n00:00:01,000 --> 00:00:04,000\n>> Pass. Two: the market cap\n\n"
        b"2\n00:00:04,000 --> 00:00:06,000\n>> Dr. Smith: thank you\n\n"
        b"3\n00:00:06,000 --> 00:00:08,000\n>> Five: agents at work\n\n"
        b"4\n00:00:08,000 --> 00:00:09,000\n>> Mine: the robot\n"
    )
    segments = parse_transcript(srt, filename="talk.srt").segments

    assert segments[0].text.startswith("Pass. Two:")
    assert segments[0].speaker == ""
    assert segments[1].speaker == "Dr. Smith"
    assert segments[2].speaker == "" and segments[2].text.startswith("Five:")
    assert segments[3].speaker == "" and segments[3].text.startswith("Mine:")
