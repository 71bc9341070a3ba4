import os
from pathlib import Path

import pytest
from django.db import connections

from devserver.browser import ENV_NAME, find_browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    """$TEST_ARTIFACTS_DIR/screenshots (default: test-artifacts/ in the repo root)."""
    root = Path(os.environ.get("TEST_ARTIFACTS_DIR") or REPO_ROOT / "test-artifacts")
    folder = root / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def browser(monkeypatch):
    """Chromium (Debian's, or Playwright's build) driven by Playwright's sync API. A missing
    browser is a failure, not a skip: `make test` installs one when there is none
    (devserver/browser.py), and a silently skipped journey proves nothing."""
    chromium_path = find_browser()
    if chromium_path is None:
        where = os.environ.get(ENV_NAME) or "/usr/bin/chromium, PATH or Playwright's cache"
        pytest.fail(
            f"The browser tests need Chromium, and none is at {where}. `make test` installs "
            "one (python -m devserver.browser); or apt-get install chromium, or "
            f"python -m playwright install chromium, or set {ENV_NAME}.",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "The browser tests need the playwright package: .venv/bin/pip install -e '.[dev]'",
            pytrace=False,
        )
    # The sync API keeps an asyncio loop in this thread; the test's ORM calls between browser
    # steps are still plain synchronous code, which Django would otherwise refuse.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            # Connections the test opened while Playwright ran live in their own context and
            # would keep the test database open past its teardown.
            connections.close_all()
