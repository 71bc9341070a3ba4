"""What every browser test does the same way: the people's password, how long to wait, and
logging in."""

from playwright.sync_api import expect

PASSWORD = "pw"
TIMEOUT_MS = 10_000


def log_in(page, base: str, username: str, lands_on: str | None = None) -> None:
    """Log in through the login page and return once the landing page has loaded (its
    deferred scripts, keyboard shortcuts and the zone detection, run before that, so a key
    pressed next is never lost). `lands_on`: the path the person must land on; otherwise
    only leaving the login page is checked (where one lands depends on one's role). The
    fields are found by their ids, not their labels, so it works in every language."""
    page.goto(f"{base}/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form.stack button[type=submit]").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    if lands_on is not None:
        expect(page).to_have_url(f"{base}{lands_on}")
