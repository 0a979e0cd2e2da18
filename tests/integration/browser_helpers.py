"""What the browser tests share: where screenshots go, the two viewports, page checks."""

from pathlib import Path

from django.conf import settings

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 780}
TIMEOUT_MS = 15_000


def screenshot(page, name: str) -> None:
    """The whole page, as it is now, in ARTIFACTS/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
