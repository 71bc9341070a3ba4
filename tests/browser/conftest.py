import os
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = os.environ.get("CHROMIUM_EXECUTABLE", "/usr/bin/chromium")
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
    """Debian's chromium driven by Playwright's sync API. A missing browser is a failure,
    not a skip: CI installs chromium, and a silently skipped journey proves nothing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"The browser tests need chromium at {CHROMIUM} (Debian: apt-get install chromium; "
            ".ci/run installs it). Set CHROMIUM_EXECUTABLE to use another binary.",
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
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            # Connections the test opened while Playwright ran live in their own context and
            # would keep the test database open past its teardown.
            connections.close_all()
