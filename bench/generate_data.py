"""Fill the database named by DATABASE_URL with realistic generated content for benchmarks.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/curation_bench \\
        .venv/bin/python bench/generate_data.py --videos 10000 [--reset] [--seed 2026]

Creates ~50 channels, ~300 people, ~40 organisations, ~60 topics and N videos, each with
1-3 appearances (person + the organisation they speak for), 1-4 topics and a published,
live summary: a 30-second text, 3 key points, 4 takeaways, 2-12 chapters of Markdown (a few
paragraphs with 0-4 links per chapter), an occasional caveat, and citations of sources that
are shared between summaries by normalised URL (some written with tracking parameters or a
fragment, as editors paste them).

Rows are written with models.rows.insert_rows (one statement per table and batch, each
column sent as one array on PostgreSQL), which skips Model.save(), so everything save() and
the services would compute is computed here with the same functions: body_html/text_html
with text.markdown.render_markdown / render_inline_markdown, the search document as
editing.derived.update_search_document builds it, citations with text.citations.
extract_citations and Source rows shared by normalised URL. The Markdown work runs in one
process per core; the database writes happen in the main process, in one transaction.

--related-only writes only what related lists read (reader.related_bulk.load_catalogue):
the same videos, appearances, topics, published summaries and cited sources, but no key
points, takeaways, chapters or caveats; a summary's search document stops once it is longer
than the part the ranking compares (TEXT_SAMPLE_CHARS), and each link written becomes a
citation outside any part. The related lists are the same as with the full data, at about
a third of the time (bench/run_related.py uses it). Not for pages: summaries have no body.

Deterministic: the same --seed and --videos give the same content (database ids aside).
Everything generated has slugs starting with "bench-"; --reset deletes it (and the sources
only it cited) before generating. Without --reset an existing generated set is kept when it
is at least as large as asked for.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import re
import sys
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")

import django  # noqa: E402

django.setup()

from django.db import connection, connections, transaction  # noqa: E402
from django.utils.text import slugify  # noqa: E402

from summaries.models import (  # noqa: E402
    Appearance,
    Caveat,
    Channel,
    Chapter,
    Citation,
    KeyPoint,
    Organisation,
    Person,
    RelatedLink,
    Source,
    Summary,
    Takeaway,
    Topic,
    Video,
)
from summaries.models.rows import insert_rows  # noqa: E402
from summaries.pagecache.generation import content_changed  # noqa: E402
from summaries.reader import facets, related_bulk  # noqa: E402
from summaries.reader.related import TEXT_SAMPLE_CHARS  # noqa: E402
from summaries.text import platforms  # noqa: E402
from summaries.text.citations import extract_citations, normalise_url  # noqa: E402
from summaries.text.markdown import html_to_text, render_inline_markdown, render_markdown  # noqa: E402

PREFIX = "bench-"
TODAY = date(2026, 12, 1)  # fixed, so the data does not depend on the day it is generated
VideoTopic = Video.topics.through

# --- Vocabulary -------------------------------------------------------------------------

CHANNEL_FIRST = (
    "Latent Tokens Gradient Inference Prompt Vector Agentic Compute Tensor Frontier Context "
    "Kernel Signal Weights Sampling"
).split()
CHANNEL_SECOND = "Weekly Lab Daily Podcast Briefing Hour Notes Show Report Talks".split()
FIRST_NAMES = (
    "Ada Ben Chloe Dev Elena Farid Grace Hiro Ines Jonas Kira Luca Maya Nadia Omar Priya "
    "Quinn Rosa Sam Tariq Uma Victor Wen Xavier Yara Zoe Aaron Bea Carlos Dana"
).split()
LAST_NAMES = (
    "Abbott Brennan Castillo Dimitrov Eriksen Fontaine Garcia Hayashi Ibrahim Jensen Kowalski "
    "Lindqvist Moreau Nakamura Okafor Petrov Quint Rahman Silva Tanaka Ueda Varga Whitfield "
    "Xu Yilmaz Zimmermann Achebe Baptiste Chowdhury Delacroix"
).split()
ORG_FIRST = (
    "Northwind Bluefin Halcyon Meridian Quarry Lumen Cobalt Juniper Tessellate Orbital "
    "Foxglove Parallax Keystone Saffron Helix Nimbus Granite Aurora Vantage Solstice"
).split()
ORG_SECOND = "AI Labs Research Systems Compute".split()
PRODUCT_KINDS = "Coder Vision Flash Pro Mini Reasoner Agent Voice Turbo Nano".split()
TOPICS = [
    "Agents", "AI coding models", "Model speed", "Open-weight models", "Local AI",
    "AI industry", "Benchmarks", "Reasoning models", "Multimodal models", "Voice assistants",
    "Robotics", "AI safety", "Alignment research", "Interpretability", "Chips and hardware",
    "Data centres", "Energy use", "Pricing", "Context windows", "Retrieval",
    "Fine-tuning", "Distillation", "Quantisation", "Inference engines", "Evaluation",
    "Prompt engineering", "Tool use", "Computer use", "Browser agents", "Code review",
    "Developer tools", "Education", "Healthcare", "Science", "Mathematics",
    "Regulation", "Copyright", "Open source", "Startups", "Funding",
    "Search", "Recommendation", "Image generation", "Video generation", "Music generation",
    "Translation", "Speech recognition", "Memory", "Long context", "Small models",
    "Synthetic data", "Training runs", "Scaling laws", "Mixture of experts", "Security",
    "Privacy", "Jobs and work", "Productivity", "Enterprise AI", "Consumer apps",
]  # fmt: skip
LANGUAGES = ["en"] * 17 + ["de", "fr", "es"]
NEWS_HOSTS = [
    "techwire.example.net", "gradient-times.example.org", "papers.example.org",
    "code.example.com", "leaderboard.example.net", "devnews.example.com",
    "chipreport.example.net", "policy-watch.example.org", "benchmarks.example.org",
    "longreads.example.com",
]  # fmt: skip
SECTIONS = ["news", "research", "blog", "docs", "pricing"]
SLUG_WORDS = (
    "faster inference agents release notes model card pricing update benchmark results "
    "technical report context window evaluation safety preview launch coding reasoning "
    "latency throughput open weights api roadmap"
).split()
LONG_TAIL_SHARE = 0.45  # links to a page no other summary cites
SOURCE_STATES = (
    [("ok", 200)] * 14 + [("redirected", 301)] * 2 + [("broken", 404)] + [(None, None)] * 3
)

VERBS = "argues explains shows notes claims suggests".split()
AUDIENCES = "developers, startups, researchers, teams, everyone".split(", ")
TASKS = "a real codebase|a data pipeline|a web app|unit tests|a legacy refactor".split("|")

# Sentences for chapter text. <<...>> marks the words a link may cover.
SENTENCES = [
    "{person} says <<the {org} announcement>> puts {product} at {figure}.",
    "In <<the published benchmark results>>, {product} scores {pct} on the coding suite.",
    "<<The release notes>> list a context window of {tokens}.",
    "{org} reported <<{figure} in its own tests>>, though no independent numbers exist yet.",
    "That matters for {topic}: an agent loop with {steps} steps waits on every call.",
    "<<A recent paper on {topic}>> found that smaller models close most of the gap.",
    "{person} compares it with {product2}, which costs {price} per million tokens.",
    "The discussion turns to {topic} and why latency, not quality, is often the bottleneck.",
    "Pricing is <<{price} per million tokens>> for input, according to {org}.",
    "Several viewers asked about running {product} locally; the answer depends on memory.",
    "<<The model card>> notes known weaknesses in long-context retrieval.",
    "{person} demonstrates a refactoring task that finishes in {secs} seconds instead of {secs2}.",
    "Independent testers at <<a public leaderboard>> place it in the top {rank} overall.",
    "The claim of {figure} comes from {org} itself and has not been replicated.",
    "For {topic}, the practical question is what a team can ship this quarter.",
    "{person} is careful to separate what was measured from what was promised.",
    "<<A follow-up post>> from {org} adds detail on how the numbers were produced.",
    "The demo uses **{product}** on {task}, with every step shown on screen.",
    "Cost, not capability, decides whether most companies adopt it, {person} argues.",
    "<<The documentation>> describes rate limits that apply to the preview.",
]
TLDR = [
    "{person} looks at {product} from {org} and what it means for {topic}.",
    "The headline figure is {figure}, which {org} measured itself.",
    "The conclusion: useful for {audience}, but check the numbers before relying on them.",
    "{person} also compares it with {product2} on {task}.",
]
KEY_POINTS = [
    ("Speed changes the workflow", "Faster answers let {audience} iterate on {topic} live."),
    ("The numbers come from {org}", "{org} reported <<{figure}>>; nobody has replicated it."),
    ("Cost is the real constraint", "At {price} per million tokens, agents get expensive."),
    ("Local use is possible", "{product} runs on a single workstation with enough memory."),
    ("Quality holds up", "On {task}, {product} matched {product2} in the demo."),
    ("Context matters", "A window of {tokens} covers most real projects."),
]
TAKEAWAYS = [
    "{product} is {figure} according to <<{org}>>.",
    "Agents benefit most from speed, because they wait on every call.",
    "Check pricing: {price} per million tokens adds up over {steps} steps.",
    "The benchmark result of {pct} comes from <<the published results>>.",
    "{person} recommends trying it on {task} before switching.",
    "Independent evaluations of {topic} are still scarce.",
]
CHAPTER_TITLES = [
    "Why {topic} matters", "{product} in practice", "What {org} announced",
    "The benchmark numbers", "Pricing and availability", "Questions from viewers",
    "Running it locally", "The bigger picture", "Comparing {product} and {product2}",
    "Where it falls short", "What {person} would build with it", "Agents and latency",
]  # fmt: skip
SYNOPSES = [
    "{person} sets out what {org} announced and why it matters for {topic}.",
    "The numbers behind the claim, and where they come from.",
    "A hands-on look at {product} on {task}.",
    "What it costs, who can use it, and what is still missing.",
]
TITLES = [
    "{product} Review: Is It Really {figure_title}?",
    "Why {topic} Matters for {audience_title}",
    "{person} on {topic}: What Changes Next",
    "I Tested {product} on {task_title}",
    "{org} Just Released {product}",
    "{topic} Explained: The Numbers That Matter",
    "{product} vs {product2}: Which One Should You Use?",
    "The Truth About {topic} in {year}",
    "{person} and {person2} Debate {topic}",
    "{org}'s New {product} Changes {topic}",
]
CAVEAT_TEXTS = [
    "The {claim} figure comes from {org}'s own tests; no independent measurement yet.",
    "{claim} was measured on a short prompt; long agent runs may differ.",
    "Treat {claim} as a vendor claim until it is replicated.",
]


# --- The fixed catalogue: channels, people, organisations, topics, sources --------------


def build_catalogue(seed: int) -> dict:
    rng = random.Random(f"{seed}:catalogue")
    channel_names = [f"{a} {b}" for a in CHANNEL_FIRST for b in CHANNEL_SECOND]
    rng.shuffle(channel_names)
    people_names = [f"{a} {b}" for a in FIRST_NAMES for b in LAST_NAMES]
    rng.shuffle(people_names)
    org_names = [f"{a} {b}" for a in ORG_FIRST for b in ORG_SECOND]
    rng.shuffle(org_names)
    org_names = sorted(org_names[:40], key=lambda n: n.split()[0])
    # At most one organisation per first word, so product names stay distinct.
    seen, orgs = set(), []
    for name in org_names:
        if name.split()[0] not in seen:
            seen.add(name.split()[0])
            orgs.append(name)
    for name in [f"{a} {b}" for a in ORG_FIRST for b in ORG_SECOND]:
        if len(orgs) >= 40:
            break
        if name not in orgs:
            orgs.append(name)

    organisations = []
    for name in orgs:
        slug = slugify(name)
        versions = rng.sample(["2", "3", "3.5", "4", "4.1", "4.5", "5", "5.2", "6"], 3)
        kinds = rng.sample(PRODUCT_KINDS, 3)
        organisations.append(
            {
                "name": name,
                "slug": PREFIX + slug,
                "domain": f"{slug}.example.com",
                "products": [
                    f"{name.split()[0]} {k} {v}" for k, v in zip(kinds, versions, strict=True)
                ],
            }
        )
    people = [
        {"name": name, "slug": PREFIX + slugify(name), "org": rng.randrange(len(organisations))}
        for name in people_names[:300]
    ]
    topics = [{"name": name, "slug": PREFIX + slugify(name)} for name in TOPICS]
    channels = []
    for rank, name in enumerate(channel_names[:50], start=1):
        channels.append(
            {
                "name": name,
                "slug": PREFIX + slugify(name),
                "description": f"{name} follows AI models, agents and the industry around them.",
                "site_url": f"https://www.youtube.com/@{slugify(name).replace('-', '')}",
                "host": rank - 1,  # people[0..49] host one channel each
                "topics": rng.sample(range(len(topics)), 6),
                "weight": 1 / rank**0.8,  # a few big channels, a long tail of small ones
            }
        )

    # Sources: pages on the organisations' own domains and on news/paper/code hosts.
    sources = []  # (url, org index or None)
    for index, org in enumerate(organisations):
        for n in range(25):
            words = "-".join(rng.sample(SLUG_WORDS, 3))
            sources.append((f"https://{org['domain']}/{SECTIONS[n % 5]}/{words}-{n}", index))
    for host in NEWS_HOSTS:
        for n in range(150):
            if host == "papers.example.org":
                path = f"abs/25{rng.randint(1, 12):02}.{rng.randint(10000, 99999)}"
            else:
                path = f"{2023 + n % 4}/{'-'.join(rng.sample(SLUG_WORDS, 4))}-{n}"
            sources.append((f"https://{host}/{path}", None))
    by_org: dict[int, list[int]] = {}
    for position, (_, org) in enumerate(sources):
        if org is not None:
            by_org.setdefault(org, []).append(position)
    news = [position for position, (_, org) in enumerate(sources) if org is None]
    return {
        "organisations": organisations,
        "people": people,
        "topics": topics,
        "channels": channels,
        "sources": [url for url, _ in sources],
        "sources_by_org": by_org,
        "news_sources": news,
    }


# --- One video with its summary (runs in a worker process) ------------------------------

_CATALOGUE: dict = {}


def _init_worker(catalogue: dict) -> None:
    global _CATALOGUE
    _CATALOGUE = catalogue


def _figure(rng: random.Random) -> str:
    return rng.choice(
        [
            f"{rng.randint(2, 9)}.{rng.randint(1, 9)} times faster",
            f"{rng.randint(10, 90)}% cheaper",
            f"{rng.randint(200, 3000):,} tokens per second",
            f"{rng.randint(2, 20)}x faster",
            f"${rng.randint(1, 40)} billion",
        ]
    )


class _Writer:
    """Fills templates for one video, choosing links and remembering the figures used."""

    def __init__(self, rng: random.Random, context: dict, source_pool: list[str], index: int):
        self.rng = rng
        self.index = index
        self.context = context
        self.source_pool = source_pool
        self.urls: list[str] = []  # every link written, in order

    def values(self) -> dict:
        rng = self.rng
        context = dict(self.context)
        context.update(
            figure=_figure(rng),
            pct=f"{rng.randint(40, 95)}%",
            tokens=f"{rng.choice([128, 200, 256, 400, 1000])},000 tokens",
            price=f"${rng.randint(1, 30)}",
            steps=rng.randint(10, 200),
            secs=rng.randint(5, 40),
            secs2=rng.randint(60, 300),
            rank=rng.choice([3, 5, 10]),
            topic=context["topic"].lower(),
            task=rng.choice(TASKS),
            audience=rng.choice(AUDIENCES),
        )
        return context

    def url(self) -> str:
        """A cited URL as an editor writes it: sometimes with tracking or a fragment.

        Popular pages (announcements, papers, well-read articles) are cited by many
        summaries; nearly half of the links go to a page that only this video cites.
        """
        rng = self.rng
        if rng.random() < LONG_TAIL_SHARE:
            words = "-".join(rng.sample(SLUG_WORDS, 3))
            host = rng.choice(NEWS_HOSTS)
            url = (
                f"https://{host}/{2023 + rng.randrange(4)}/{words}-{self.index}-{rng.randrange(9)}"
            )
        else:
            url = rng.choice(self.source_pool)
        roll = rng.random()
        if roll < 0.10:
            url += "?utm_source=newsletter&utm_medium=email"
        elif roll < 0.15:
            url += "#section-2"
        self.urls.append(url)
        return url

    def fill(self, template: str, link: bool) -> tuple[str, str]:
        """The Markdown of a template, and the figure it states ("" when none)."""
        values = self.values()
        text = template.format(**values)
        if link and "<<" in text:
            text = re.sub(r"<<(.*?)>>", lambda m: f"[{m.group(1)}]({self.url()})", text, count=1)
        text = text.replace("<<", "").replace(">>", "")
        figure = next((values[k] for k in ("figure", "pct") if "{" + k + "}" in template), "")
        return text, figure


def _inline(source: str) -> tuple[str, str]:
    """(HTML, plain text) of a one-line Markdown text, as KeyPoint/Takeaway.save() store it."""
    html = render_inline_markdown(source)
    return html, html_to_text(html)  # == markdown_to_text(source): <p> adds only spaces


def build_video(index: int) -> dict:
    """Everything about video `index`, rendered; no database access."""
    cat = _CATALOGUE
    rng = random.Random(f"{cat['seed']}:video:{index}")
    channels = cat["channels"]
    channel_index = rng.choices(range(len(channels)), weights=cat["channel_weights"])[0]
    channel = channels[channel_index]

    # People: usually the channel's host, plus guests; affiliations mostly their usual org.
    people_idx = []
    if rng.random() < 0.7:
        people_idx.append(channel["host"])
    wanted = rng.randint(1, 3)
    while len(people_idx) < wanted:
        person = rng.randrange(len(cat["people"]))
        if person not in people_idx:
            people_idx.append(person)
    appearances = []
    for person in people_idx:
        org = cat["people"][person]["org"]
        roll = rng.random()
        if roll < 0.1:
            org = rng.randrange(len(cat["organisations"]))
        elif roll < 0.15:
            org = None
        appearances.append((person, org))
    topic_idx: list[int] = []
    for _ in range(rng.randint(1, 4)):
        pool = channel["topics"] if rng.random() < 0.7 else range(len(cat["topics"]))
        topic = rng.choice(list(pool))
        if topic not in topic_idx:
            topic_idx.append(topic)

    orgs = [org for _, org in appearances if org is not None] or [
        rng.randrange(len(cat["organisations"]))
    ]
    org = cat["organisations"][orgs[0]]
    other_org = cat["organisations"][rng.randrange(len(cat["organisations"]))]
    people_names = [cat["people"][p]["name"] for p in people_idx]
    context = {
        "person": people_names[0],
        "person2": people_names[-1] if len(people_names) > 1 else cat["people"][0]["name"],
        "org": org["name"],
        "product": rng.choice(org["products"]),
        "product2": rng.choice(other_org["products"]),
        "topic": cat["topics"][topic_idx[0]]["name"],
    }
    # Half of the links go to the featured organisations' pages, half to news and papers.
    pool = [i for o in orgs for i in cat["sources_by_org"][o]]
    pool += rng.sample(cat["news_sources"], 40)
    writer = _Writer(rng, context, [cat["sources"][i] for i in pool], index)

    values = writer.values()
    title = rng.choice(TITLES).format(
        **{**values, "topic": context["topic"]},
        figure_title=values["figure"].title(),
        audience_title=values["audience"].title(),
        task_title=values["task"].title(),
        year=2024 + index % 3,
    )
    title = title[:300]
    published_on = TODAY - timedelta(days=rng.randint(1, 3 * 365))
    publish_at = datetime(
        published_on.year, published_on.month, published_on.day, 14, tzinfo=UTC
    ) + timedelta(minutes=rng.randint(0, 8 * 60))
    duration = rng.randint(5 * 60, 120 * 60)
    video = {
        "title": title,
        "slug": f"{PREFIX}{slugify(title)[:150].strip('-')}-{index}",
        "channel": channel_index,
        "source_url": f"https://www.youtube.com/watch?v=bn{index:09d}",
        "duration_seconds": duration,
        "language": rng.choice(LANGUAGES),
        "published_on": published_on,
        "blurb": writer.fill(rng.choice(TLDR), link=False)[0][:300],
    }
    tldr = " ".join(writer.fill(t, link=False)[0] for t in rng.sample(TLDR, rng.randint(2, 3)))

    lean = cat["related_only"]
    citations = []  # in reading order: key points, takeaways, chapters (as services does)

    def cite(kind: str, position: int, source: str) -> None:
        if lean:
            return
        for found in extract_citations(source):
            if len(found.normalised_url) > 2000 or len(found.url) > 2000:
                continue
            citations.append(
                (
                    kind,
                    position,
                    found.url,
                    found.normalised_url,
                    found.link_text[:500],
                    found.claim,
                    found.key_phrase[:200],
                )
            )

    search_parts = [title, tldr]
    key_points = []
    for position, (point_title, body_template) in enumerate(rng.sample(KEY_POINTS, 3), 1):
        body, _ = writer.fill(body_template, link=rng.random() < 0.2)
        point_title = point_title.format(**values)
        html, text = _inline(body)
        time_at = rng.randrange(duration) if rng.random() < 0.5 else None
        key_points.append((position, point_title, body, html, time_at))
        search_parts.append(f"{point_title} {text}")
        if "](" in body:
            cite("key_point", position, body)
    takeaways = []
    takeaway_figures = []
    for position, template in enumerate(rng.sample(TAKEAWAYS, 4), 1):
        text_md, figure = writer.fill(template, link=rng.random() < 0.4)
        html, text = _inline(text_md)
        time_at = rng.randrange(duration) if rng.random() < 0.3 else None
        takeaways.append((position, text_md, html, time_at))
        takeaway_figures.append(figure)
        search_parts.append(text)
        if "](" in text_md:
            cite("takeaway", position, text_md)

    chapters = []
    chapter_figures = []
    count = rng.randint(2, 12)
    starts = sorted(rng.sample(range(1, duration), count - 1)) if duration > count else []
    starts = [0, *starts][:count]
    for position in range(1, count + 1):
        links = rng.randint(0, 4)
        sentences = [
            writer.fill(rng.choice(SENTENCES), link=False)
            for _ in range(rng.randint(6, 14))  # re-filled below where a link goes
        ]
        linkable = [i for i, _ in enumerate(sentences)]
        rng.shuffle(linkable)
        for i in linkable[:links]:
            template = rng.choice([s for s in SENTENCES if "<<" in s])
            sentences[i] = writer.fill(template, link=True)
        paragraphs, current = [], []
        for text, _ in sentences:
            current.append(text)
            if len(current) >= rng.randint(2, 4):
                paragraphs.append(" ".join(current))
                current = []
        if current:
            paragraphs.append(" ".join(current))
        if rng.random() < 0.15:
            paragraphs.insert(
                rng.randint(1, len(paragraphs)),
                "\n".join(f"- {writer.fill(rng.choice(TAKEAWAYS), False)[0]}" for _ in range(3)),
            )
        body = "\n\n".join(paragraphs)
        # Only what related lists read, when lean: the search text's first characters.
        searched = not lean or len("\n".join(p for p in search_parts if p)) < TEXT_SAMPLE_CHARS
        html = render_markdown(body) if searched else ""
        chapter_title = rng.choice(CHAPTER_TITLES).format(**values)[:200]
        synopsis = writer.fill(rng.choice(SYNOPSES), link=False)[0]
        start = starts[position - 1] if position - 1 < len(starts) else None
        chapters.append((position, chapter_title, synopsis, body, html, start))
        chapter_figures.append([f for _, f in sentences if f and f in body])
        if searched:
            search_parts += [chapter_title, synopsis, html_to_text(html)]
        if "](" in body:
            cite("chapter", position, body)

    caveats = []
    if rng.random() < 0.3:
        candidates = [(i, f) for i, figs in enumerate(chapter_figures, 1) for f in figs]
        if candidates:
            chapter_position, claim = rng.choice(candidates)
            text = rng.choice(CAVEAT_TEXTS).format(claim=claim, org=org["name"])
            caveats.append(("chapter", chapter_position, claim, text, render_inline_markdown(text)))
    if rng.random() < 0.1:
        candidates = [(i, f) for i, f in enumerate(takeaway_figures, 1) if f]
        if candidates:
            takeaway_position, claim = rng.choice(candidates)
            text = rng.choice(CAVEAT_TEXTS).format(claim=claim, org=org["name"])
            caveats.append(
                ("takeaway", takeaway_position, claim, text, render_inline_markdown(text))
            )

    if lean:  # no summary parts; a citation of every link written, not placed in a part
        key_points, takeaways, chapters, caveats = [], [], [], []
        citations = [(None, None, url, normalise_url(url), "", "", "") for url in writer.urls]
    return {
        "video": video,
        "appearances": appearances,
        "topics": topic_idx,
        "summary": {
            "tldr": tldr,
            "publish_at": publish_at,
            "search_document": "\n".join(p for p in search_parts if p),
        },
        "key_points": key_points,
        "takeaways": takeaways,
        "chapters": chapters,
        "caveats": caveats,
        "citations": citations,
    }


# --- Writing to the database ------------------------------------------------------------


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _sql(verb: str, model, where: str) -> str:
    """One statement on a model's table; values are always passed as parameters."""
    return f"{verb} FROM {_table(model)} WHERE {where}"  # noqa: S608 - table from model metadata


def delete_generated() -> Counter:
    """Delete everything with a "bench-" slug, its parts, and sources only it cited.

    Raw SQL: the ORM's delete() would load every row and send a signal per row.
    """
    videos = _sql("SELECT id", Video, "slug LIKE %s")
    summaries = _sql("SELECT id", Summary, f"video_id IN ({videos})")
    statements = [
        (model, _sql("DELETE", model, f"summary_id IN ({summaries})"))
        for model in (Citation, Caveat, Chapter, Takeaway, KeyPoint)
    ]
    statements += [
        (model, _sql("DELETE", model, f"video_id IN ({videos})"))
        for model in (Summary, Appearance, VideoTopic, RelatedLink)
    ]
    statements.append((RelatedLink, _sql("DELETE", RelatedLink, f"related_id IN ({videos})")))
    statements += [
        (model, _sql("DELETE", model, "slug LIKE %s"))
        for model in (Video, Channel, Person, Organisation, Topic)
    ]
    deleted = Counter()
    with connection.cursor() as cursor:
        for model, sql in statements:
            cursor.execute(sql, [PREFIX + "%"])
            deleted[model.__name__] = cursor.rowcount
        uncited = f"NOT EXISTS ({_sql('SELECT 1', Citation, f'source_id = {_table(Source)}.id')})"
        hosts = "(host LIKE %s OR host LIKE %s OR host LIKE %s)"
        cursor.execute(
            _sql("DELETE", Source, f"{hosts} AND {uncited}"),
            ["%.example.com", "%.example.org", "%.example.net"],
        )
        deleted["Source"] = cursor.rowcount
    return deleted


def create_catalogue(cat: dict) -> dict:
    """Channels, people, organisations and topics; returns their database ids by index."""
    organisations = Organisation.objects.bulk_create(
        Organisation(name=o["name"], slug=o["slug"], domains=o["domain"])
        for o in cat["organisations"]
    )
    people = Person.objects.bulk_create(
        Person(name=p["name"], slug=p["slug"]) for p in cat["people"]
    )
    topics = Topic.objects.bulk_create(Topic(name=t["name"], slug=t["slug"]) for t in cat["topics"])
    channels = Channel.objects.bulk_create(
        Channel(
            name=c["name"], slug=c["slug"], description=c["description"], site_url=c["site_url"]
        )
        for c in cat["channels"]
    )
    return {
        "organisations": [o.pk for o in organisations],
        "people": [p.pk for p in people],
        "topics": [t.pk for t in topics],
        "channels": [c.pk for c in channels],
    }


class Columns(dict):
    """Rows of one table as insert_rows takes them: each field's values, one per row."""

    def add(self, **row) -> None:
        for name, value in row.items():
            self.setdefault(name, []).append(value)

    @property
    def size(self) -> int:
        return len(next(iter(self.values()), ()))


class SourceIds:
    """Source rows by normalised URL, created on first use and shared by every citation."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.created = 0

    def resolve(self, urls: set[str]) -> dict[str, int]:
        missing = urls - self.ids.keys()
        if missing:
            existing = Source.objects.filter(url__in=missing).values_list("url", "pk")
            self.ids.update(existing)
            new = sorted(missing - self.ids.keys())
            rows = Columns()
            for url in new:
                rows.add(**self._new_source(url))
            self.ids.update(zip(new, insert_rows(Source, rows), strict=True))
            self.created += len(new)
        return self.ids

    @staticmethod
    def _new_source(url: str) -> dict:
        """A source, most of them checked by the link checker already (some broken)."""
        rng = random.Random(url)
        state, status = rng.choice(SOURCE_STATES)
        checked = datetime(2026, 11, 30, tzinfo=UTC) - timedelta(hours=rng.randint(1, 500))
        source = {
            "url": url,
            "host": urlsplit(url).hostname or "",
            "state": state or Source.State.UNCHECKED,
            "status_code": status,
            "last_checked_at": checked if state else None,
            "next_check_at": checked + timedelta(days=7) if state else None,
            "response_ms": rng.randint(40, 900) if state else None,
            "final_url": url.rstrip("/") + "/" if state == "redirected" else "",
        }
        return source


def write_batch(items: list[dict], ids: dict, sources: SourceIds, counts: Counter) -> None:
    """Insert a batch of built videos with everything that belongs to them: one statement
    per table (models.rows.insert_rows: each column sent as one array on PostgreSQL)."""
    videos = Columns()
    for item in items:
        data = dict(item["video"])
        data["channel_id"] = ids["channels"][data.pop("channel")]
        data["platform"], data["platform_video_id"] = platforms.parse_video_url(data["source_url"])
        videos.add(**data)
    video_ids = insert_rows(Video, videos)

    appearances, video_topics, summaries = Columns(), Columns(), Columns()
    for item, video_id in zip(items, video_ids, strict=True):
        for position, (person, org) in enumerate(item["appearances"], start=1):
            appearances.add(
                video_id=video_id,
                person_id=ids["people"][person],
                organisation_id=None if org is None else ids["organisations"][org],
                position=position,
            )
        for topic in item["topics"]:
            video_topics.add(video_id=video_id, topic_id=ids["topics"][topic])
        summaries.add(
            video_id=video_id, first_published_at=item["summary"]["publish_at"], **item["summary"]
        )
    insert_rows(Appearance, appearances)
    insert_rows(VideoTopic, video_topics)
    summary_ids = insert_rows(Summary, summaries, same={"status": Summary.Status.PUBLISHED})

    key_points, takeaways, chapters = Columns(), Columns(), Columns()
    for item, summary_id in zip(items, summary_ids, strict=True):
        for p, t, b, h, at in item["key_points"]:
            key_points.add(summary_id=summary_id, position=p, title=t, body=b, body_html=h, time=at)
        for p, t, h, at in item["takeaways"]:
            takeaways.add(summary_id=summary_id, position=p, text=t, text_html=h, time=at)
        for p, t, s, b, h, start in item["chapters"]:
            chapters.add(
                summary_id=summary_id,
                position=p,
                title=t,
                synopsis=s,
                body=b,
                body_html=h,
                start_time=start,
            )
    parts = {}
    for kind, model, rows in (
        ("key_point", KeyPoint, key_points),
        ("takeaway", Takeaway, takeaways),
        ("chapter", Chapter, chapters),
    ):
        inserted = insert_rows(model, rows)
        places = zip(rows.get("summary_id", []), rows.get("position", []), strict=True)
        parts.update({(kind, *place): pk for place, pk in zip(places, inserted, strict=True)})

    caveats, citations = Columns(), Columns()
    source_ids = sources.resolve({c[3] for item in items for c in item["citations"]})

    def part_ids(kind: str | None, summary_id: int, where: int | None) -> dict:
        """The part columns of a caveat or citation: the part it is in, if any."""
        columns = {"chapter_id": None, "key_point_id": None, "takeaway_id": None}
        if kind is not None:
            columns[f"{kind}_id"] = parts[(kind, summary_id, where)]
        return columns

    for item, summary_id in zip(items, summary_ids, strict=True):
        for position, (kind, where, claim, text, html) in enumerate(item["caveats"], start=1):
            caveats.add(
                summary_id=summary_id,
                position=position,
                claim=claim[:300],
                text=text,
                text_html=html,
                **part_ids(kind, summary_id, where),
            )
        for position, citation in enumerate(item["citations"], start=1):
            kind, where, url, normalised, link_text, claim, key_phrase = citation
            citations.add(
                summary_id=summary_id,
                source_id=source_ids[normalised],
                position=position,
                url=url,
                link_text=link_text,
                claim=claim,
                key_phrase=key_phrase,
                **part_ids(kind, summary_id, where),
            )
    insert_rows(Caveat, caveats)
    insert_rows(Citation, citations)

    counts.update(
        Video=videos.size,
        Appearance=appearances.size,
        VideoTopic=video_topics.size,
        Summary=summaries.size,
        KeyPoint=key_points.size,
        Takeaway=takeaways.size,
        Chapter=chapters.size,
        Caveat=caveats.size,
        Citation=citations.size,
    )


def generated_video_count() -> int:
    return Video.objects.filter(slug__startswith=PREFIX).count()


def analyse() -> None:
    """Give the planner statistics (and the visibility map) for the freshly loaded tables."""
    if connection.vendor != "postgresql":
        return
    models = [Channel, Person, Organisation, Topic, Video, Appearance, VideoTopic, Summary]
    models += [KeyPoint, Takeaway, Chapter, Caveat, Source, Citation]
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"VACUUM ANALYZE {_table(model)}")


def generate(
    videos: int,
    seed: int,
    reset: bool,
    workers: int,
    batch: int,
    related_lists: bool = True,
    related_only: bool = False,
) -> int:
    started = time.perf_counter()
    existing = generated_video_count()
    if existing and not reset:
        if existing >= videos:
            print(f"{existing} generated videos already present (asked for {videos}); kept.")
            print("Use --reset to generate them again.")
            return 0
        print(
            f"{existing} generated videos present, fewer than {videos}: run with --reset.",
            file=sys.stderr,
        )
        return 1

    catalogue = build_catalogue(seed)
    catalogue["seed"] = seed
    catalogue["related_only"] = related_only
    catalogue["channel_weights"] = [c["weight"] for c in catalogue["channels"]]
    counts: Counter = Counter()
    sources = SourceIds()
    connections.close_all()  # the workers never touch the database; share no socket
    context = multiprocessing.get_context("fork")
    pool = context.Pool(workers, initializer=_init_worker, initargs=(catalogue,))
    with pool, transaction.atomic():
        if reset:
            deleted = delete_generated()
            if any(deleted.values()):
                print("deleted:", ", ".join(f"{k} {v}" for k, v in deleted.items() if v))
        ids = create_catalogue(catalogue)
        counts.update(
            Channel=len(ids["channels"]),
            Person=len(ids["people"]),
            Organisation=len(ids["organisations"]),
            Topic=len(ids["topics"]),
        )
        pending = []
        for item in pool.imap(build_video, range(videos), chunksize=25):
            pending.append(item)
            if len(pending) >= batch:
                write_batch(pending, ids, sources, counts)
                pending = []
                done = counts["Video"]
                elapsed = time.perf_counter() - started
                print(f"  {done}/{videos} videos, {elapsed:.0f} s", flush=True)
        if pending:
            write_batch(pending, ids, sources, counts)
    counts["Source (new)"] = sources.created
    written = time.perf_counter() - started
    analyse()
    if related_lists:
        store_related()
        analyse()
    # bulk_create sends no signals: make cached pages stale, and stored filter choices.
    content_changed()
    facets.forget_all()
    elapsed = time.perf_counter() - started
    print("created:", ", ".join(f"{name} {n}" for name, n in counts.items()))
    print(
        f"generated {counts['Video']} videos in {elapsed:.1f} s "
        f"({written:.1f} s building and writing, {elapsed - written:.1f} s VACUUM ANALYZE; "
        f"{workers} worker processes)"
    )
    return 0


def store_related() -> None:
    """Store every generated video's related list, as `manage.py refresh_related --all`."""
    started = time.perf_counter()
    ids = list(Video.objects.filter(slug__startswith=PREFIX).values_list("pk", flat=True))

    def progress(done: int, total: int) -> None:
        if done % 5000 < 500 or done == total:
            print(f"  related: {done}/{total}, {time.perf_counter() - started:.0f} s")

    done = related_bulk.refresh_all_related(ids=ids, progress=progress)
    print(f"stored related videos of {done} videos in {time.perf_counter() - started:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=10_000, help="videos to create")
    parser.add_argument("--seed", type=int, default=2026, help="random seed (same seed, same data)")
    parser.add_argument("--reset", action="store_true", help="delete generated data first")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="Markdown rendering processes"
    )
    parser.add_argument("--batch", type=int, default=500, help="videos per database batch")
    parser.add_argument(
        "--no-related", action="store_true", help="leave the related lists unstored"
    )
    parser.add_argument(
        "--related-only",
        action="store_true",
        help="only what related lists read: no summary parts (for bench/run_related.py)",
    )
    args = parser.parse_args(argv)
    if args.videos < 1:
        parser.error("--videos must be at least 1")
    db = connection.settings_dict
    print(f"database: {db['ENGINE'].rsplit('.', 1)[-1]} {db['NAME']}")
    return generate(
        args.videos,
        args.seed,
        args.reset,
        max(1, args.workers),
        args.batch,
        related_lists=not args.no_related,
        related_only=args.related_only,
    )


if __name__ == "__main__":
    sys.exit(main())
