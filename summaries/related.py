"""Related videos (temporary placeholder; replaced by the ranking implementation)."""


def related_videos(video, *, limit=10, now=None):
    return []
