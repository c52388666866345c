"""Drive Debian's Chromium through Playwright against the live test server."""

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.builders import PASSWORD

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
VIEWPORTS = [PHONE, DESKTOP]
VIEWPORT_IDS = ["phone", "desktop"]
# What an accessibility check refuses: axe-core's two highest impacts.
REFUSED_IMPACTS = {"critical", "serious"}


def chromium_path() -> str | None:
    """Return the system Chromium (Playwright's own download does not work here)."""
    found = shutil.which("chromium")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")
def chromium() -> Iterator:
    """Launch Chromium once per module, or skip (fail in CI) when it is absent."""
    path = chromium_path()
    if path is None:
        missing = "Chromium not installed (apt-get install chromium)"
        if os.environ.get("YORIK_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing}, but YORIK_REQUIRE_BROWSER=1 requires it")
        pytest.skip(f"{missing}; browser tests skipped")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread, which
    # Django would take for async code; the test's ORM calls are synchronous.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, live_server) -> Iterator:
    """Return a fresh phone-sized tab without cookies, on the live server."""
    context = chromium.new_context(
        base_url=live_server.url, viewport=PHONE, locale="de-DE"
    )
    context.set_default_timeout(10_000)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="session")
def axe_checker():
    """Return axe-core, as axe-playwright-python ships it (no download)."""
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


@pytest.fixture
def accessible(axe_checker) -> Callable:
    """Return a check that the page has no critical or serious axe-core violation."""

    def check(page) -> None:
        results = axe_checker.run(page)
        refused = [
            f"{violation['id']} ({violation['impact']}): "
            + "; ".join(node["target"][0] for node in violation["nodes"][:5])
            for violation in results.response["violations"]
            if violation["impact"] in REFUSED_IMPACTS
        ]
        assert refused == [], f"{page.url}: {refused}"

    return check


@pytest.fixture
def screenshot() -> Callable:
    """Return a function that saves the page under artifacts/screenshots/."""

    def save(page, name: str, *, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=path, full_page=full_page)
        return path

    return save


def log_in(page, username: str, login_path: str = "/accounts/login/") -> None:
    """Log in through the German login form and wait until it is left."""
    page.goto(login_path)
    page.get_by_label("Benutzername").fill(username)
    page.get_by_label("Passwort").fill(PASSWORD)
    page.get_by_role("button", name="Anmelden").click()
    page.wait_for_url(lambda url: login_path not in url)
