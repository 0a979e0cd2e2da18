"""Recognise video platforms and their ids from a video's source URL."""

import re
from urllib.parse import parse_qs, urlsplit

YOUTUBE = "youtube"
OTHER = "other"

_YOUTUBE_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
_YOUTUBE_HOSTS = {"youtube.com", "m.youtube.com", "music.youtube.com", "youtube-nocookie.com"}
# Paths whose next segment is the id: /embed/ID, /shorts/ID, /live/ID, /v/ID.
_YOUTUBE_PATH_PREFIXES = ("embed", "shorts", "live", "v", "e")


def parse_video_url(url: str) -> tuple[str, str]:
    """Return (platform, platform video id) for a video URL; ("other", "") when unknown.

    Understands the YouTube forms editors paste: watch?v=ID, youtu.be/ID, /embed/ID,
    /shorts/ID, /live/ID, with or without www/m, extra parameters and timestamps.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return OTHER, ""
    host = (parts.hostname or "").lower().removeprefix("www.")
    if parts.scheme not in ("http", "https"):
        return OTHER, ""
    candidate = ""
    if host == "youtu.be":
        candidate = parts.path.lstrip("/").split("/")[0]
    elif host in _YOUTUBE_HOSTS:
        segments = [s for s in parts.path.split("/") if s]
        if segments[:1] == ["watch"]:
            candidate = parse_qs(parts.query).get("v", [""])[0]
        elif len(segments) >= 2 and segments[0] in _YOUTUBE_PATH_PREFIXES:
            candidate = segments[1]
    if _YOUTUBE_ID.match(candidate):
        return YOUTUBE, candidate
    return OTHER, ""


def video_url_at(url: str, platform: str, video_id: str, seconds: int) -> str:
    """A link that opens the video at the given second (used by chapter start times)."""
    if platform == YOUTUBE and video_id:
        return f"https://www.youtube.com/watch?v={video_id}&t={int(seconds)}s"
    return f"{url.split('#', 1)[0]}#t={int(seconds)}"
