"""Speaker turns of caption files: a cue's text cut at its turn marks (">>", a dialogue
dash), and the speaker labels that name who speaks ("NAME: ", "[Name] ") taken out of the
text as speakers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import _SPEAKER_CHANGE
from .pieces import _Piece

# Speaker labels of caption files. A cue's text may start a new speaker's turn with ">>"
# (YouTube's mark, anywhere in a line) or with a dialogue dash at the start of a line
# ("- Ready?" / "- Yes."), and name the speaker with "NAME: ", "[Name] " or "[NAME]: ".
# A name is up to four words, each starting with a capital ("Jo", "Dr. Smith", "ANNA"),
# or "Speaker 2". Written after a turn mark it is a speaker at once; at the start of a cue
# only when the same name starts two turns or more ("Step One: …" once is a sentence).
# Sound notes ("[Music]", "[laughs]") are never names and stay in the text.
_LABEL = re.compile(r"([^\W\d_][^:,;!?\n]{0,39}?):\s+(?=\S)")
_BRACKET_LABEL = re.compile(r"\[([^\W\d_][^\[\]:,;!?\n]{0,39})\]:?\s+(?=\S)")
_NUMBERED_SPEAKER = re.compile(r"speaker[ _-]?[0-9a-z]{1,3}", re.IGNORECASE)
_NAME_WORD = re.compile(r"[^\W\d_][\w.'’-]*")
_DASH = re.compile(r"-(?:\s+|(?=[^\W\d_]))(?=\S)")
_COUNTING = frozenset(
    "one two three four five six seven eight nine ten eleven twelve first second third "
    "fourth fifth sixth seventh eighth ninth tenth next last finally step point number "
    "part question".split()
)
# Words that open a sentence before a colon, never a name: "Mine: …", "So: …".
_NOT_NAMES = frozenset(
    "i me my mine you your yours we us our ours they them their theirs he him his she her "
    "hers it its this that these those here there so well okay now yes no and but or then "
    "answer note update correction".split()
)
_SOUND_NOTES = frozenset(
    "music applause laughter laughs laughing laugh chuckles chuckling inaudible crosstalk "
    "silence cheering cheers clapping sighs sigh coughs cough noise foreign unintelligible "
    "indistinct pause groans bleep beep static sound audio blank_audio no_audio".split()
)


def _is_name(label: str) -> bool:
    words = label.split()
    if not 1 <= len(words) <= 4 or "http" in label.lower():
        return False
    if _NUMBERED_SPEAKER.fullmatch(label):
        return True
    if any(word.casefold().strip(".") in _SOUND_NOTES for word in words):
        return False
    if words[0].casefold() in _COUNTING or (len(words) == 1 and label.casefold() in _NOT_NAMES):
        return False  # an item of a list said aloud: "Five: AI agents…"
    if any(word.endswith(".") and len(word) > 4 for word in words):
        return False  # a full stop after a whole word ends a sentence: "Pass. Two:"
    return all(_NAME_WORD.fullmatch(word) and word[0].isupper() for word in words)


def _label(text: str) -> tuple[str, str]:
    """(name, the text after it) of a turn starting with a speaker label, else ("", text)."""
    match = _BRACKET_LABEL.match(text) if text.startswith("[") else _LABEL.match(text)
    if match and _is_name(match.group(1).strip()):
        return " ".join(match.group(1).split()), text[match.end() :]
    return "", text


@dataclass(slots=True)
class _Turn:
    text: str
    turn: bool  # started by a turn mark
    speaker: str = ""


def _turns_of(lines: list[str]) -> list[_Turn]:
    """The cue's text cut at its turn marks: a dialogue dash starting a line, ">>"."""
    turns: list[_Turn] = []
    for line in lines:
        dash = _DASH.match(line)
        if dash:
            turns.append(_Turn(line[dash.end() :], True))
            line = ""
        elif not turns:
            turns.append(_Turn("", False))
        pieces = line.split(_SPEAKER_CHANGE) if _SPEAKER_CHANGE in line else [line]
        if dash and _SPEAKER_CHANGE in turns[-1].text:
            pieces = turns[-1].text.split(_SPEAKER_CHANGE)
            turns[-1].text = ""
        turns[-1].text = " ".join((turns[-1].text + " " + pieces[0]).split())
        turns.extend(_Turn(" ".join(piece.split()), True) for piece in pieces[1:])
    return [turn for turn in turns if turn.text or turn.turn]


def _speaker_turns(pieces: list[_Piece], *, labelled: bool) -> list[_Piece]:
    """The pieces cut at their speakers' turns, labels taken out of the text as speakers
    (when `labelled`: the file has no voice tags). A cue holding several turns shares its
    time among them in proportion to their length."""
    cut = [_turns_of(piece.lines) if piece.lines is not None else None for piece in pieces]
    if labelled:
        _name_turns([turn for turns in cut if turns for turn in turns])
    result: list[_Piece] = []
    for index, (piece, turns) in enumerate(zip(pieces, cut, strict=True)):
        if turns is None:
            result.append(piece)
            continue
        turns = [turn for turn in turns if turn.text]
        if len(turns) == 1 and not turns[0].turn and not turns[0].speaker:
            piece.text = turns[0].text
            result.append(piece)
            continue
        end = piece.end
        if index + 1 < len(pieces) and pieces[index + 1].rolling:
            end = max(piece.start, min(end, pieces[index + 1].start))
        result.extend(_turn_pieces(piece, turns, end))
    return result


def _name_turns(turns: list[_Turn]) -> None:
    found = [_label(turn.text) for turn in turns]
    counts: dict[str, int] = {}
    for name, _ in found:
        if name:
            counts[name] = counts.get(name, 0) + 1
    for turn, (name, rest) in zip(turns, found, strict=True):
        if name and (turn.turn or counts[name] >= 2):
            turn.speaker, turn.text = name, " ".join(rest.split())


def _turn_pieces(piece: _Piece, turns: list[_Turn], end: int) -> list[_Piece]:
    total = sum(len(turn.text) + 1 for turn in turns)
    span, offset = end - piece.start, 0
    pieces = []
    for number, turn in enumerate(turns):
        start = piece.start + round(span * offset / total)
        offset += len(turn.text) + 1
        last = number == len(turns) - 1
        stop = piece.end if last else piece.start + round(span * offset / total)
        speaker = turn.speaker or piece.speaker
        pieces.append(
            _Piece(
                start,
                stop,
                turn.text,
                speaker=speaker,
                rolling=piece.rolling and not number,
                turn=turn.turn,
            )
        )
    return pieces
