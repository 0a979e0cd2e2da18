"""The demo content: the published Matthew Berman speed summary and its channel's other videos.

Texts are copied verbatim from the page we publish (/work/shared/examples/berman-speed-summary.txt).

Invented values (the example page does not show them):
- the channel description;
- the main video's title, slug, source URL, date, duration and blurb;
- every source URL (made-up YouTube ids starting with "DEMO"), and every slug;
- the publish times (14:00 UTC on each video's date);
- topics and their assignment to videos;
- the caveat on takeaway 2 (the page has no such note; its text restates the chapter caveat);
- the main video's transcript (summaries/demo/transcripts.py), written to hold every
  statement of the summary.
Chapter start times and thumbnails are not shown on the page, so they are left empty (readers
see each chapter start where its pin to the transcript says it is said).
"""

import datetime

CHANNEL = {
    "slug": "matthew-berman",
    "name": "Matthew Berman",
    # Invented.
    "description": (
        "Matthew Berman tests AI models, agents and coding tools, and follows the AI industry "
        "through news, interviews and hands-on demos."
    ),
    "site_url": "https://www.youtube.com/@matthew_berman",
}

# Domains one per line, as the Organisation.domains field expects.
ORGANISATIONS = [
    {"slug": "forward-future", "name": "Forward Future", "domains": "forwardfuture.ai"},
    {"slug": "openai", "name": "OpenAI", "domains": "openai.com"},
    {"slug": "anthropic", "name": "Anthropic", "domains": "anthropic.com"},
    {"slug": "cerebras", "name": "Cerebras", "domains": "cerebras.ai"},
]

PEOPLE = [
    {"slug": "matthew-berman", "name": "Matthew Berman"},
    {"slug": "sam-altman", "name": "Sam Altman"},
]

TOPICS = [
    {"slug": "model-speed", "name": "Model speed"},
    {"slug": "agents", "name": "Agents"},
    {"slug": "ai-coding-models", "name": "AI coding models"},
    {"slug": "open-weight-models", "name": "Open-weight models"},
    {"slug": "local-ai", "name": "Local AI"},
    {"slug": "ai-industry", "name": "AI industry"},
]

# Each video is published at this time of day (UTC) on its date; the time is invented.
PUBLISH_TIME = datetime.time(14, 0, tzinfo=datetime.UTC)

BERMAN = ("matthew-berman", "forward-future")
ALTMAN = ("sam-altman", "openai")

# The speed piece. Title, slug, source URL, date, duration and blurb are invented.
MAIN_VIDEO = {
    "slug": "speed-maxis-unite-why-fast-ai-models-matter-for-agents",
    "title": "Speed Maxis Unite: Why Fast AI Models Matter for Agents",
    "source_url": "https://www.youtube.com/watch?v=DEMOspeed01",
    "published_on": datetime.date(2026, 10, 28),
    # As long as its transcript (summaries/demo/transcripts.py).
    "duration_seconds": 8 * 60 + 30,
    "language": "en",
    "blurb": (
        "Matthew Berman argues that model speed matters alongside quality, especially for agents, "
        "citing Claude Opus 4.6 Fast Mode and GPT-5.3-Codex-Spark."
    ),
    # (person slug, organisation slug the person stands for on this video)
    "appearances": [BERMAN],
    "topics": ["model-speed", "agents", "ai-coding-models"],
}

ANTHROPIC_LINK = "https://www.anthropic.com/research/measuring-agent-autonomy"
OPENAI_LINK = "https://openai.com/index/introducing-gpt-5-3-codex-spark/"

MAIN_SUMMARY = {
    "tldr": (
        "Matthew Berman says the speed of AI models matters alongside output quality, especially "
        "when agents work without a person reading each token. He cites Claude Opus 4.6 Fast Mode "
        "and GPT-5.3-Codex-Spark as examples."
    ),
    "key_points": [
        {
            "title": "A case for speed",
            "body": (
                "Berman has long valued model speed and argues that it matters alongside quality."
            ),
        },
        {
            "title": "Agents and reading speed",
            "body": (
                "An agent can act on model output without waiting for a person to read it, "
                "making speed important for its workflow."
            ),
        },
        {
            "title": "Two fast options",
            "body": (
                "Berman points to Opus 4.6 Fast Mode and GPT-5.3-Codex-Spark as examples of the "
                "trend."
            ),
        },
    ],
    "takeaways": [
        "Berman argues that model speed becomes especially important when agents perform work "
        "without waiting for a human to read their output.",
        "Anthropic says Opus 4.6 Fast Mode generates output 2.5 times faster than its regular "
        "mode.",
        "OpenAI reported more than 1,000 tokens per second for GPT-5.3-Codex-Spark on Cerebras "
        "hardware.",
        "Token generation speed is only one factor in total task time and does not by itself "
        "demonstrate quality or reliability.",
    ],
    "chapters": [
        {
            "title": "Why speed matters",
            "synopsis": (
                "Berman argues that fast output is especially useful for agents doing real-world "
                "work. He contrasts this with a focus on model quality alone."
            ),
            "body": (
                "I feel vindicated: I have been a “speed maxi” for AI models for a long time. "
                "People have often argued that quality matters most, but I think speed is just as "
                "important. When agents can do real-world work without waiting for a human to "
                "read every output, faster generation can make a meaningful difference."
            ),
        },
        {
            "title": "Faster model releases",
            "synopsis": (
                "He cites Anthropic’s Fast Mode and OpenAI’s Codex-Spark. The published speed "
                "figures describe output generation, not necessarily total task duration."
            ),
            # The page's two editorial sentences are not the speaker's words: they are the
            # caveats below, shown beside the claims they qualify.
            "body": (
                "I have been using Claude Opus 4.6 Fast Mode and find it extremely fast. "
                f"[Anthropic says]({ANTHROPIC_LINK}) that this mode generates output 2.5 times "
                "faster than regular Opus 4.6.\n"
                "\n"
                "OpenAI has also released GPT-5.3-Codex-Spark, which it says can generate more "
                "than 1,000 tokens per second on Cerebras hardware. "
                f"Its [February 2026 announcement]({OPENAI_LINK}) described a smaller coding model "
                "offered as a research preview, initially to ChatGPT Pro users. "
                "Speed maxis unite."
            ),
        },
    ],
    # Positions are unique per summary across all caveats. "chapter"/"takeaway" give the
    # position of the item the caveat is attached to.
    "caveats": [
        {
            "chapter": 2,
            "claim": "2.5 times faster",
            "text": (
                "This is a comparison of output generation speed, not necessarily a 2.5-fold "
                "improvement in every complete task."
            ),
        },
        {
            "chapter": 2,
            "claim": "1,000 tokens per second",
            "text": (
                "Actual task time also depends on input processing, tool execution and network "
                "overhead; speed alone does not establish output quality."
            ),
        },
        {
            # Invented: the page has no note on the takeaway.
            "takeaway": 2,
            "claim": "2.5 times faster",
            "text": "Anthropic’s figure compares output generation speed, not complete-task time.",
        },
    ],
}

# "More from this channel", in the page's order (newest first). Slugs, source URLs and topics
# are invented; titles, dates, durations, blurbs and people are the page's. The page's first
# card reads "Matthew Berman, Sam Altman · Forward Future", but Sam Altman stands for OpenAI,
# so each appearance carries its own organisation.
MORE_VIDEOS = [
    {
        "slug": "matthew-berman-examines-anthropics-ipo-filing",
        "title": "Matthew Berman Examines Anthropic’s IPO Filing, AI Growth and Governance",
        "source_url": "https://www.youtube.com/watch?v=DEMOanthIPO",
        "published_on": datetime.date(2026, 10, 27),
        "duration_seconds": 34 * 60 + 21,
        "language": "en",
        "blurb": (
            "The presenter reviews the S-1’s financial metrics, compute strategy and voting "
            "structure while questioning the tension between rapid AI development and safety."
        ),
        "appearances": [BERMAN, ALTMAN],
        "topics": ["ai-industry"],
    },
    {
        "slug": "sam-altman-on-human-values-and-problem-solving",
        "title": "Sam Altman on Human Values and Problem-Solving in an AI World",
        "source_url": "https://www.youtube.com/watch?v=DEMOaltman1",
        "published_on": datetime.date(2026, 10, 25),
        "duration_seconds": 26,
        "language": "en",
        "blurb": (
            "In a short interview excerpt, Altman considers the enjoyment of solving hard problems "
            "and the human role in interpreting results."
        ),
        "appearances": [ALTMAN],
        "topics": ["ai-industry"],
    },
    {
        "slug": "kimi-k3-1-rubiks-cube-solver-demonstration",
        "title": "Kimi K3.1 and a Rubik’s Cube Solver Demonstration",
        "source_url": "https://www.youtube.com/watch?v=DEMOkimiRub",
        "published_on": datetime.date(2026, 10, 25),
        "duration_seconds": 36,
        "language": "en",
        "blurb": (
            "Matthew Berman shows a scrambled virtual cube being solved and gives the Kimi K3.1 "
            "test a favorable assessment."
        ),
        "appearances": [BERMAN],
        "topics": ["open-weight-models", "ai-coding-models"],
    },
    {
        "slug": "ai-generated-kimi-benchmark-chart-invented-scores",
        "title": "An AI-Generated Kimi Benchmark Chart Used Invented Scores",
        "source_url": "https://www.youtube.com/watch?v=DEMOkimiCht",
        "published_on": datetime.date(2026, 10, 24),
        "duration_seconds": 21,
        "language": "en",
        "blurb": (
            "Matthew Berman asks for a graph of Kimi K3.1 Pro benchmarks, then discovers that the "
            "displayed figures are illustrative placeholders."
        ),
        "appearances": [BERMAN],
        "topics": ["open-weight-models"],
    },
    {
        "slug": "kimi-k3-1-pro-tested",
        "title": ("Kimi K3.1 Pro Tested: Strong 3D Demos, Uneven Results and Competitive Pricing"),
        "source_url": "https://www.youtube.com/watch?v=DEMOkimiPro",
        "published_on": datetime.date(2026, 10, 24),
        "duration_seconds": 25 * 60 + 50,
        "language": "en",
        "blurb": (
            "Matthew Berman tests the open-weight model on coding, 3D rendering and visual "
            "explanations, then compares benchmark results and prices."
        ),
        "appearances": [BERMAN],
        "topics": ["open-weight-models", "ai-coding-models"],
    },
    {
        "slug": "who-is-local-ai-for",
        "title": "Who Is Local AI For? The Costs, Trade-offs and a Hybrid Future",
        "source_url": "https://www.youtube.com/watch?v=DEMOlocalAI",
        "published_on": datetime.date(2026, 10, 23),
        "duration_seconds": 32 * 60 + 20,
        "language": "en",
        "blurb": (
            "Matthew Berman weighs data control and independence against hardware cost, setup "
            "complexity and inference speed."
        ),
        "appearances": [BERMAN],
        "topics": ["local-ai", "model-speed"],
    },
]
