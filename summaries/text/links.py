"""Stored URLs as pages show them: the host, whether it may be an href, text fragments."""

from urllib.parse import quote, urlsplit

# Schemes a stored URL may have to become a link on a page: anything else (javascript:,
# data:, vbscript:, ...) is shown, where it is shown, as text only.
LINK_SCHEMES = ("http", "https")


def host_of(url: str) -> str:
    """anthropic.com for https://www.anthropic.com/x; "" for what is no URL."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced "[" or "]", read as a broken IPv6 address
        return ""
    return host.removeprefix("www.")


def http_url(url: str) -> str:
    """The URL if it may be a link's href (http or https), else "".

    URL fields are validated on input, but a stored value is still text: a javascript:
    URL in an href runs when clicked, however well the attribute is escaped.
    """
    url = url or ""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return ""
    return url if scheme in LINK_SCHEMES else ""


def text_fragment_url(url: str, phrase: str) -> str:
    """The URL with a text fragment (#:~:text=) so the browser scrolls to the phrase."""
    phrase = " ".join((phrase or "").split())
    if not phrase:
        return url
    base = url.split("#", 1)[0]
    # '-' ',' '&' have a meaning inside a text directive and must be escaped.
    return f"{base}#:~:text={quote(phrase, safe='').replace('-', '%2D')}"
