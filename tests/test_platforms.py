import pytest

from summaries.text.platforms import parse_video_url, video_url_at


@pytest.mark.parametrize(
    "url",
    [
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
        "https://m.youtube.com/watch?feature=share&v=dQw4w9WgXcQ",
        "http://youtu.be/dQw4w9WgXcQ",
        "https://youtu.be/dQw4w9WgXcQ?t=10",
        "https://www.youtube.com/embed/dQw4w9WgXcQ",
        "https://www.youtube.com/shorts/dQw4w9WgXcQ",
        "https://www.youtube.com/live/dQw4w9WgXcQ?si=abc",
        "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
        "  https://www.youtube.com/watch?v=dQw4w9WgXcQ  ",
    ],
)
def test_youtube_urls_give_the_video_id(url):
    assert parse_video_url(url) == ("youtube", "dQw4w9WgXcQ")


@pytest.mark.parametrize(
    "url",
    [
        "https://www.youtube.com/watch?v=short",
        "https://www.youtube.com/@matthew_berman",
        "https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ",
        "https://vimeo.com/123456",
        "javascript:alert(1)//youtu.be/dQw4w9WgXcQ",
        "ftp://youtu.be/dQw4w9WgXcQ",
        "http://[::1",
        "",
    ],
)
def test_other_urls_have_no_platform_id(url):
    assert parse_video_url(url) == ("other", "")


def test_url_at_a_second_opens_youtube_at_that_time():
    assert video_url_at("x", "youtube", "dQw4w9WgXcQ", 75) == (
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=75s"
    )
    assert video_url_at("https://vimeo.com/1#x", "other", "", 9) == "https://vimeo.com/1#t=9"
