"""A transcript as text to read: its words grouped into paragraphs.

A paragraph ends where the speaker changes, where a chapter starts (`breaks`), and at the
end of a sentence followed by a pause (PAUSE_S or more) or closing a paragraph long enough
(MAX_SENTENCES sentences, or MAX_WORDS words). A transcript without punctuation (automatic
captions) has no sentences to go by: its paragraphs end at a pause, at a shorter pause once
they have MIN_WORDS words, or at MAX_WORDS words. The words are kept as the file writes
them, punctuation included. Pure functions: no ORM, no requests.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .transcripts import Segment, Word, timed_words

# A silence this long after a sentence starts a new paragraph.
PAUSE_S = 2.0
# A paragraph ends with the sentence that makes it this long.
MAX_SENTENCES = 6
MAX_WORDS = 120
# Past this many words a paragraph ends even inside a sentence (one that never ends).
HARD_MAX_WORDS = 2 * MAX_WORDS
# Without punctuation: a paragraph of MIN_WORDS or more ends at a pause of SHORT_PAUSE_S.
MIN_WORDS = 60
SHORT_PAUSE_S = 0.6
# A transcript has punctuation when it ends a sentence at least once in this many words.
WORDS_PER_SENTENCE = 60

# A word ending a sentence: ".", "?", "!" or "…", before any closing quotes or brackets.
_SENTENCE_END = re.compile(r"[.?!…][\"'”’)\]]*$")
# Words ending in a full stop that rarely end a sentence.
_ABBREVIATIONS = frozenset("mr. mrs. ms. dr. prof. st. vs. e.g. i.e. no. approx.".split())


@dataclass(frozen=True)
class Paragraph:
    """Words `first`..`end` (end exclusive) of the transcript's timed words, said from
    `start` (seconds) by `speaker` ("" when the file names nobody)."""

    start: float
    speaker: str
    text: str
    first: int
    end: int
    segment: int  # the index of the segment it starts in


def ends_sentence(word: str) -> bool:
    return bool(_SENTENCE_END.search(word)) and word.casefold() not in _ABBREVIATIONS


def paragraphs(segments: Sequence[Segment], *, breaks: Collection[int] = ()) -> list[Paragraph]:
    """The paragraphs of `segments` (in time order); a paragraph also starts with each
    segment whose index is in `breaks`. Word indices count the words as `timed_words`
    gives them, so that a pin's `first` falls in the paragraph that says it."""
    timed = [timed_words([segment]) for segment in segments]
    count = sum(len(words) for words in timed)
    ends = sum(ends_sentence(word.text) for words in timed for word in words)
    punctuated = ends > 0 and ends * WORDS_PER_SENTENCE >= count
    builder = _Builder(punctuated)
    speaker = None
    for index, (segment, words) in enumerate(zip(segments, timed, strict=True)):
        changed = speaker is not None and (
            segment.turn or (bool(segment.speaker) and segment.speaker != speaker)
        )
        if changed or index in breaks:
            builder.close()
        if segment.speaker or speaker is None:
            speaker = segment.speaker
        for word in words:
            builder.add(word, index, speaker)
    builder.close()
    return builder.done


class _Builder:
    """Paragraphs built a word at a time; `close` ends the one being built."""

    def __init__(self, punctuated: bool) -> None:
        self.punctuated = punctuated
        self.done: list[Paragraph] = []
        self.words: list[Word] = []
        self.sentences = 0
        self.next_word = 0  # the index of the next word among all the words
        self.segment = 0
        self.speaker = ""

    def add(self, word: Word, segment: int, speaker: str) -> None:
        if self.words and self._ends_before(word):
            self.close()
        if not self.words:
            self.segment, self.speaker = segment, speaker
        self.words.append(word)
        self.sentences += ends_sentence(word.text)

    def _ends_before(self, word: Word) -> bool:
        """Whether the paragraph ends before `word`."""
        size = len(self.words)
        if size >= HARD_MAX_WORDS:
            return True
        last = self.words[-1]
        pause = word.start - last.end
        if self.punctuated:
            if not ends_sentence(last.text):
                return False
            return pause >= PAUSE_S or self.sentences >= MAX_SENTENCES or size >= MAX_WORDS
        return (
            pause >= PAUSE_S or (size >= MIN_WORDS and pause >= SHORT_PAUSE_S) or size >= MAX_WORDS
        )

    def close(self) -> None:
        if self.words:
            first = self.next_word
            self.next_word += len(self.words)
            text = " ".join(word.text for word in self.words)
            start = self.words[0].start
            self.done.append(
                Paragraph(start, self.speaker, text, first, self.next_word, self.segment)
            )
        self.words, self.sentences = [], 0
