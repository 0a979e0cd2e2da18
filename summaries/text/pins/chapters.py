"""Where chapters could start, each with a short title."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..transcripts import Segment, timed_words
from .base import ChapterSuggestion
from .index import _index, _Transcript
from .tokens import _is_content

# ---------------------------------------------------------------------------------------
# Chapters
# ---------------------------------------------------------------------------------------

# Words either side of a possible split compared for a change of subject.
_SHIFT_WORDS = 120


def suggest_chapters(
    segments: Sequence[Segment], *, min_length: float = 120.0, max_chapters: int = 20
) -> list[ChapterSuggestion]:
    """Where chapters could start, each with a short title: the first at the first word,
    the others at segment starts where the subject changes most (the words before and
    after share the fewest stems) or the speaker pauses, at least `min_length` seconds
    apart and from the end."""
    words = timed_words(list(segments))
    if not words:
        return []
    index = _index(words)
    starts = _segment_starts(segments, index)
    finish = words[-1].end
    scored = sorted(
        ((score, time, token) for time, token, score in _shifts(index, starts)),
        reverse=True,
    )
    chosen = [(words[0].start, 0)]
    for _, time, token in scored:
        if len(chosen) >= max_chapters:
            break
        if finish - time < min_length or any(abs(time - t) < min_length for t, _ in chosen):
            continue
        chosen.append((time, token))
    chosen.sort()
    return [
        ChapterSuggestion(time, _title(index, token, next_token))
        for (time, token), (_, next_token) in zip(
            chosen, chosen[1:] + [(finish, len(index.tokens))], strict=True
        )
    ]


def _segment_starts(
    segments: Sequence[Segment], index: _Transcript
) -> list[tuple[float, int, float]]:
    """(time, first token, pause before it) of each segment but the first."""
    starts = []
    word = 0
    previous_end: float | None = None
    for segment in segments:
        count = len(segment.words) or len(segment.text.split())
        if previous_end is not None and count:
            a, _ = index.tokens_of(word, word + 1)
            if a < len(index.tokens):
                starts.append((segment.start, a, max(0.0, segment.start - previous_end)))
        word += count
        previous_end = segment.end
    return starts


def _shifts(
    index: _Transcript, starts: list[tuple[float, int, float]]
) -> list[tuple[float, int, float]]:
    """(time, token, score) of each possible split: how different the words before and
    after are (0-1), plus up to 0.3 for a pause of up to three seconds."""
    content = [
        stem if _is_content(term) else ""
        for term, stem in zip(index.tokens, index.stems, strict=True)
    ]
    scored = []
    for time, token, pause in starts:
        before = Counter(s for s in content[max(0, token - _SHIFT_WORDS) : token] if s)
        after = Counter(s for s in content[token : token + _SHIFT_WORDS] if s)
        scored.append((time, token, 1.0 - _cosine(before, after) + 0.1 * min(pause, 3.0)))
    return scored


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(count * b[stem] for stem, count in a.items())
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0


def _title(index: _Transcript, a: int, b: int) -> str:
    """Up to three words said often in a chapter and seldom elsewhere, in the order they
    are first said: "Opus, fast and anthropic"."""
    counts = Counter(
        stem
        for term, stem in zip(index.tokens[a:b], index.stems[a:b], strict=True)
        if _is_content(term) and term.isalpha()
    )
    if not counts:
        return ""
    total = len(index.tokens)

    def distinctive(stem: str) -> float:
        return counts[stem] * math.log(1.0 + total / len(index.postings[stem]))

    best = sorted(counts, key=distinctive, reverse=True)[:3]
    first_said = {stem: index.stems.index(stem, a, b) for stem in best}
    picked = [index.tokens[first_said[stem]] for stem in sorted(best, key=first_said.__getitem__)]
    line = picked[0] if len(picked) == 1 else f"{', '.join(picked[:-1])} and {picked[-1]}"
    return line[:1].upper() + line[1:]
