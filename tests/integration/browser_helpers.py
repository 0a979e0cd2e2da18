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


PASSWORD = "correct horse battery"  # tests.factories.UserFactory's


def sign_in(page, live_server, user) -> None:
    """Sign `user` in to the admin in `page`, at the desktop size."""
    from playwright.sync_api import expect

    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(user.username, ignore_case=True)
