"""A transcript's words grouped into paragraphs (summaries/text/paragraphs.py): by speaker,
by pause after a sentence, by length; punctuation kept; word indices as pins count them."""

from summaries.text.paragraphs import MAX_SENTENCES, MAX_WORDS, ends_sentence, paragraphs
from summaries.text.transcripts import Segment, Word, timed_words


def seg(start, end, text, speaker="", **kwargs) -> Segment:
    return Segment(float(start), float(end), text, speaker, **kwargs)


def texts(found) -> list[str]:
    return [paragraph.text for paragraph in found]


def test_sentences_said_without_a_pause_by_one_speaker_are_one_paragraph():
    found = paragraphs([seg(0, 4, "Hello there, friends."), seg(4, 8, "Today: fast models!")])

    assert texts(found) == ["Hello there, friends. Today: fast models!"]
    assert (found[0].start, found[0].first, found[0].end, found[0].segment) == (0.0, 0, 6, 0)


def test_a_change_of_speaker_starts_a_paragraph_even_inside_a_sentence():
    found = paragraphs(
        [
            seg(0, 3, "So what do you", "Host"),
            seg(3, 6, "Think? It is fast.", "Guest"),
            seg(6, 9, "And cheap.", "Guest"),
            seg(9, 12, "Really?", turn=True),  # a turn mark with no name
        ]
    )

    assert texts(found) == ["So what do you", "Think? It is fast. And cheap.", "Really?"]
    assert [p.speaker for p in found] == ["Host", "Guest", "Guest"]


def test_a_pause_after_a_sentence_starts_a_paragraph_not_one_inside_it():
    found = paragraphs(
        [
            seg(0, 3, "First we measured."),
            seg(5.5, 8, "Then, after a while,"),  # 2.5 s after a sentence
            seg(11, 14, "we compared the results."),  # 3 s inside a sentence
        ]
    )

    assert texts(found) == ["First we measured.", "Then, after a while, we compared the results."]
    assert found[1].start == 5.5


def test_a_paragraph_ends_with_its_sixth_sentence():
    sentences = [seg(n, n + 1, f"Sentence {n}.") for n in range(MAX_SENTENCES + 2)]

    found = paragraphs(sentences)

    assert [len(p.text.split()) // 2 for p in found] == [MAX_SENTENCES, 2]


def test_a_paragraph_ends_with_the_sentence_that_takes_it_past_the_word_cap():
    long_sentence = " ".join(["word"] * 50) + "."
    found = paragraphs([seg(n * 20, n * 20 + 20, long_sentence) for n in range(4)])

    assert [len(p.text.split()) for p in found] == [150, 50]
    assert all(len(p.text.split()) < MAX_WORDS + 50 for p in found)


def test_a_sentence_that_never_ends_is_cut_at_twice_the_word_cap():
    # Ten short sentences, each after a pause: the transcript has punctuation.
    answers = [seg(n * 5, n * 5 + 1, "Right.") for n in range(10)]

    found = paragraphs([*answers, seg(60, 160, " ".join(["and"] * 500) + ".")])

    assert [len(p.text.split()) for p in found] == [1] * 10 + [240, 240, 20]


def test_without_punctuation_paragraphs_end_at_pauses_and_the_word_cap():
    words = tuple(Word(n * 0.4, n * 0.4 + 0.3, "word") for n in range(300))
    caption = seg(0, 120, " ".join(w.text for w in words), words=words)
    later = seg(125, 127, "and then more")  # after a 5 s silence

    found = paragraphs([caption, later])

    assert [len(p.text.split()) for p in found] == [MAX_WORDS, MAX_WORDS, 60, 3]


def test_without_punctuation_a_short_pause_ends_a_paragraph_of_sixty_words():
    words = [Word(n * 0.4, n * 0.4 + 0.3, "word") for n in range(100)]
    # A 0.7 s pause after word 70 (but not after word 30).
    words = [w if i < 70 else Word(w.start + 0.7, w.end + 0.7, w.text) for i, w in enumerate(words)]
    words = [w if i < 30 else Word(w.start + 0.7, w.end + 0.7, w.text) for i, w in enumerate(words)]
    caption = seg(0, 50, " ".join(w.text for w in words), words=tuple(words))

    assert [len(p.text.split()) for p in paragraphs([caption])] == [70, 30]


def test_a_chapter_break_starts_a_paragraph_at_its_segment():
    found = paragraphs([seg(0, 2, "One."), seg(2, 4, "Two."), seg(4, 6, "Three.")], breaks={1})

    assert texts(found) == ["One.", "Two. Three."]
    assert [p.segment for p in found] == [0, 1]


def test_word_indices_are_those_pins_count():
    segments = [
        seg(0, 3, "Welcome, everyone.", "Host"),
        seg(3, 9, "Speed compounds in agent loops.", "Guest"),
        seg(20, 24, "Questions?", "Host"),
    ]
    words = timed_words(segments)

    found = paragraphs(segments)

    assert [(p.first, p.end) for p in found] == [(0, 2), (2, 7), (7, 8)]
    for paragraph in found:
        assert paragraph.text == " ".join(w.text for w in words[paragraph.first : paragraph.end])


def test_abbreviations_and_closing_quotes():
    assert ends_sentence("done.") and ends_sentence("“really?”") and ends_sentence("wow!)")
    assert not ends_sentence("Dr.") and not ends_sentence("e.g.") and not ends_sentence("3,5")


def test_no_segments_no_paragraphs():
    assert paragraphs([]) == []
