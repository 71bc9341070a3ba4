"""The API docs work without the internet: Swagger UI and ReDoc come from this project's own
static files (drf-spectacular-sidecar), and rendering them sends no request off the host."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


def _watch(page, requested: list[str]):
    def route(route):
        requested.append(route.request.url)
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            route.abort()

    page.route("**/*", route)


@pytest.mark.parametrize(
    ("path", "shows"),
    [("/api/docs/", ".opblock-summary"), ("/api/redoc/", "[data-section-id]")],
)
def test_api_docs_render_the_operations_with_no_request_leaving_the_host(
    browser, live_server, screenshots_dir, path, shows
):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requested: list[str] = []
    _watch(page, requested)
    page.goto(f"{live_server.url}{path}")
    expect(page.locator(shows).first).to_be_visible(timeout=20_000)
    assert page.locator(shows).count() > 10  # the operations, not an empty shell
    page.screenshot(path=str(screenshots_dir / f"api-docs-{path.strip('/').replace('/', '-')}.png"))
    foreign = [u for u in requested if urlsplit(u).hostname not in LOCAL_HOSTS]
    assert foreign == [] and requested, foreign
