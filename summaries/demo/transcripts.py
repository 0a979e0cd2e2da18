"""The demo video's transcript, as YouTube's automatic captions would give it (WebVTT).

Invented, in our own words: what the speed video could have said, written so that every
key point, takeaway, caveat, chapter start and quotation of the demo summary is found in it
(summaries/demo/receipts.py pins them). `SPEECH` is what is said, as automatic captions
write it: no punctuation, lower case but for names and "I", numbers in digits; each
string is a breath, followed by a short pause.

`auto_caption_vtt` renders it as YouTube writes automatic captions: lines of five to nine
words, each shown while it is said with a time for every word after the first
(`word<00:00:01.234><c> next</c>`) below the line said before it (a rolling display), then
a 10 ms cue showing the finished line alone. Times follow the words' lengths, so the same
text always gives the same bytes: a second `load_demo` finds the transcript unchanged.
"""

from __future__ import annotations

FILENAME = "speed-maxis-unite.en.vtt"

# A "[Music]" note before the talk and after it, in milliseconds.
INTRO_MS = 4_000
OUTRO_MS = 6_000
# How long a word takes to say: a base and a share per letter (about 2.7 words a second),
# and the pause after each breath.
WORD_MS = 150
LETTER_MS = 42
PAUSE_MS = 650
LINE_LENGTHS = (7, 5, 8, 6, 9, 7, 6, 8)
CUE_SETTINGS = "align:start position:0%"

SPEECH = (
    # Why speed matters.
    "I feel vindicated I've been a speed maxi for AI models for a long time",
    "people have often argued that quality matters most but I think speed is just as "
    "important when agents can do real world work without waiting for a human to read "
    "every output faster generation can make a meaningful difference",
    "and I know some of you have been telling me in the comments for months that speed "
    "is a nice extra and the only thing that counts is whether the answer is right",
    "and look I get it quality matters of course it does a fast wrong answer is still a "
    "wrong answer and nobody wants that",
    "but I have valued model speed for a long time and I have always argued that it "
    "matters alongside quality and here is why I think that is truer now than it has "
    "ever been",
    "when you were chatting with a model speed had a ceiling you read at maybe five words "
    "a second so once the model wrote faster than you could read extra speed did not buy "
    "you very much",
    "you were the bottleneck the model was waiting on you",
    "but that is not how we use these models anymore we hand them a task and we walk away",
    "an agent can act on the model's output without waiting for a person to read it and "
    "that makes speed important for its whole workflow",
    "it reads a file it writes some code it runs the tests it looks at the error and then "
    "it asks the model again and again and again",
    "so a single task can be fifty or a hundred model calls in a row and every one of them "
    "is waiting on generation",
    "and all of that time adds up the agent sits there while the tokens come out one after another",
    "so when agents do the work without waiting for a human to read their output speed "
    "becomes especially important it is the whole workflow",
    "let me give you an example from this week",
    "I asked an agent to add a small feature to one of my side projects a settings page "
    "with a couple of toggles and some tests",
    "it made a plan it wrote the code it ran the tests two of them failed it read the "
    "errors fixed them and ran everything again",
    "that was around forty calls to the model and with a slower model I sat there for the "
    "better part of twenty minutes",
    "with a fast model the same loop was over in a few minutes and I was already on to "
    "the next thing",
    "think about what that means for a coding agent if every step is twice as fast the "
    "agent can try twice as many ideas in the same afternoon",
    "it can run the tests one more time it can check its own work it can throw away a bad "
    "plan and start over",
    "and that actually feeds back into quality a fast loop gives the agent more chances to "
    "catch its own mistakes",
    "I'm not saying a fast model that gets everything wrong is useful it is not what I'm "
    "saying is that once the quality is there speed is what turns it into real work done",
    "there are really two kinds of speed people talk about",
    "there's how long it takes for the first token to show up and there's how many tokens "
    "per second you get once it starts",
    "in a chat window the first one is what you feel but for an agent writing a whole file "
    "or a long plan the second one is what decides how long you wait",
    "and it gets even more important when you have several agents working together a "
    "manager agent handing out work to sub agents and waiting for all of them to come back",
    "the slowest step sets the pace for everybody so the speed of the model shows up "
    "everywhere in that system",
    "and it also changes how it feels to work with these tools when the answer comes back "
    "in a second you stay in the flow",
    "when you wait forty seconds for every edit you go check your phone and you lose the thread",
    "you stop experimenting because every experiment costs you a coffee break",
    "the leaderboards we all look at mostly measure how good an answer is and that is "
    "important but they leave out how long you waited for it",
    "so yes I've been a speed maxi for a long time and I think the labs are finally coming "
    "around to it",
    "because in the last few weeks we've seen two big releases that are all about speed "
    "and I want to go through both of them",
    # Faster model releases.
    "I've been using Claude Opus 4.6 fast mode and find it extremely fast Anthropic says "
    "that this mode generates output 2.5 times faster than regular Opus 4.6",
    "so it is the same model the same Opus 4.6 you already know just running in a mode "
    "that puts out tokens a lot quicker",
    "you turn it on when you want the speed and you turn it off when you don't need it",
    "and in my own use it is very noticeable I gave it a refactor across a dozen files and "
    "it was done before I had finished reading the plan",
    "the thing I like most is that I don't have to give anything up I still get the model "
    "I trust for hard problems it just answers faster",
    "now keep in mind what that number is Anthropic's figure is about how fast the output "
    "is generated",
    "it is not a promise that every complete task finishes 2.5 times sooner because a task "
    "is more than generating output",
    "so this is a comparison of output generation speed not necessarily a 2.5-fold "
    "improvement in every complete task",
    "the second one is from OpenAI",
    "OpenAI has also released GPT-5.3 Codex Spark which it says can generate more than "
    "1,000 tokens per second on Cerebras hardware",
    "more than 1,000 tokens per second that is a number we would not have believed a "
    "couple of years ago",
    "their announcement in February described a smaller coding model offered as a "
    "research preview initially to ChatGPT Pro users",
    "so it is a smaller model it is a preview and it is running on Cerebras chips which "
    "are built for exactly this kind of throughput",
    "and you can feel it the code just appears it is almost instant",
    "I tried it on the small stuff renaming things writing tests cleaning up a messy "
    "function and for that kind of quick edit it is a joy",
    "for the really hard problems I'd still reach for a bigger model today but that is "
    "kind of the point you pick the right tool for the step",
    "and I can picture an agent that plans with a big careful model and then hands the "
    "small edits to a very fast one",
    "so that is Opus 4.6 fast mode from Anthropic and GPT-5.3 Codex Spark from OpenAI two "
    "examples of the same trend the labs are competing on speed now and not only on "
    "benchmarks",
    "now let me be fair about this because I know what the comments will say",
    "token generation speed is only one factor in total task time and it does not by "
    "itself demonstrate quality or reliability",
    "actual task time also depends on input processing tool execution and network overhead "
    "speed alone does not establish output quality",
    "so a model that writes 1,000 tokens per second does not make the whole job finish in a blink",
    "a fast model still has to be right you still have to check what it did and you still "
    "need good evaluations",
    "but if you give me two models of the same quality I will take the faster one every "
    "single time",
    "and for agents that is going to matter more and more as they take on longer and longer tasks",
    "so that is my take I think we are going to see a lot more fast modes and a lot more "
    "special hardware for inference this year",
    "and I think the models that win the agent era will be the ones that are good enough "
    "and fast enough at the same time",
    "let me know in the comments are you a speed maxi or do you care more about quality "
    "and if you have tried either of these fast modes tell me how it went",
    "if you enjoyed this video please consider giving a like and subscribe and I'll see "
    "you in the next one",
    "speed maxis unite",
)


def _clock(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _lines() -> list[tuple[list[tuple[int, str]], int]]:
    """Each caption line: its words with their start times (ms), and when it ends."""
    lines = []
    now = INTRO_MS
    shape = 0
    for breath in SPEECH:
        words = breath.split()
        while words:
            size = LINE_LENGTHS[shape % len(LINE_LENGTHS)]
            shape += 1
            taken, words = words[:size], words[size:]
            timed = []
            for word in taken:
                timed.append((now, word))
                now += WORD_MS + LETTER_MS * len(word)
            end = now + (PAUSE_MS if not words else 0)
            lines.append((timed, end))
            now = end
    return lines


def _note(start: int, end: int, text: str) -> list[str]:
    return [f"{_clock(start)} --> {_clock(end)} {CUE_SETTINGS}", " ", text, ""]


def auto_caption_vtt() -> bytes:
    """SPEECH as a YouTube automatic-caption WebVTT file (UTF-8)."""
    out = ["WEBVTT", "Kind: captions", "Language: en", ""]
    out += _note(0, INTRO_MS, "[Music]")
    previous = " "
    end = INTRO_MS
    for words, end in _lines():
        (start, first), *rest = words
        tagged = first + "".join(f"<{_clock(at)}><c> {word}</c>" for at, word in rest)
        plain = " ".join(word for _, word in words)
        out += [f"{_clock(start)} --> {_clock(end - 10)} {CUE_SETTINGS}", previous, tagged, ""]
        out += [f"{_clock(end - 10)} --> {_clock(end)} {CUE_SETTINGS}", plain, " ", ""]
        previous = plain
    out += _note(end, end + OUTRO_MS, "[Music]")
    return "\n".join(out).encode()
