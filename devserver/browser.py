"""The browser the browser tests drive (tests/browser): found wherever it is installed, and
installed by `make test` when there is none (Playwright's installer first, then the system's
package manager when running as root), saying what it does. A missing browser is never a
silent skip: the browser tests fail with the reason.

    python -m devserver.browser        # print the browser found, installing one if needed
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ENV_NAME = "CHROMIUM_EXECUTABLE"
SYSTEM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
INSTALL_TIMEOUT_SECONDS = 600


def _executable(path: str | os.PathLike | None) -> str | None:
    return str(path) if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def playwright_browsers(env: Mapping[str, str]) -> list[str]:
    """Chromium builds Playwright's installer put in its cache, newest first."""
    root = env.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    patterns = (
        "chromium-*/chrome-linux*/chrome",
        "chromium_headless_shell-*/chrome-linux*/headless_shell",
    )
    found = [path for pattern in patterns for path in glob.glob(os.path.join(root, pattern))]
    return sorted(found, reverse=True)


def find_browser(env: Mapping[str, str] | None = None) -> str | None:
    """CHROMIUM_EXECUTABLE when set (and only it: a wrong setting is reported, not bypassed),
    else Debian's chromium, one on PATH, or Playwright's."""
    env = os.environ if env is None else env
    if env.get(ENV_NAME):
        return _executable(env[ENV_NAME])
    on_path = [shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")]
    for candidate in (*SYSTEM_PATHS, *on_path, *playwright_browsers(env)):
        if found := _executable(candidate):
            return found
    return None


def _run(argv: list[str], say: Callable[[str], None]) -> bool:
    say("  $ " + " ".join(argv))
    try:
        result = subprocess.run(argv, timeout=INSTALL_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        say(f"  failed: {exc}")
        return False
    if result.returncode != 0:
        say(f"  failed with exit code {result.returncode}")
    return result.returncode == 0


def install_browser(say: Callable[[str], None], env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    say("No browser for the browser tests: installing Chromium with Playwright's installer")
    if _run([sys.executable, "-m", "playwright", "install", "chromium"], say):
        if found := find_browser(env):
            return found
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        say("Installing Debian's chromium package instead (running as root)")
        quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        updated = subprocess.run(["apt-get", "update"], env=quiet, check=False).returncode == 0
        if (
            updated
            and subprocess.run(
                ["apt-get", "install", "-y", "chromium"], env=quiet, check=False
            ).returncode
            == 0
        ):
            return find_browser(env)
    return None


def ensure_browser(say: Callable[[str], None], env: Mapping[str, str] | None = None) -> str | None:
    """The browser's path, installing one when none is found; None (after saying why) when
    that failed too."""
    env = os.environ if env is None else env
    if env.get(ENV_NAME) and not find_browser(env):
        say(f"error: {ENV_NAME}={env[ENV_NAME]} is not an executable; the browser tests will fail")
        return None
    found = find_browser(env) or install_browser(say, env)
    if found:
        say(f"Browser for the browser tests: {found}")
    else:
        say(
            "error: no browser could be installed; the browser tests will fail. Install one "
            "(Debian: apt-get install chromium; or: python -m playwright install chromium) "
            f"or set {ENV_NAME}."
        )
    return found


def ensure_cjk_font(say: Callable[[str], None]) -> bool:
    """A font with Chinese glyphs, so that the zh-hans journey's screenshots show text, not
    boxes (people's own machines have one; a bare server often has none). Only the pictures
    depend on it, so a failure is said, never fatal. Debian's fonts-wqy-microhei is 5 MB."""
    if not shutil.which("fc-list"):
        return False
    listed = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, check=False)
    if listed.stdout.strip():
        return True
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get")):
        say("note: no Chinese font; the zh-hans screenshots will show boxes")
        return False
    say("Installing a Chinese font for the screenshots (fonts-wqy-microhei)")
    quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "fonts-wqy-microhei"]
    if subprocess.run(install, env=quiet, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=quiet, check=False)
        if subprocess.run(install, env=quiet, check=False).returncode != 0:
            say("note: could not install a Chinese font; the zh-hans screenshots will show boxes")
            return False
    return True


if __name__ == "__main__":
    sys.exit(0 if ensure_browser(lambda message: print(message, flush=True)) else 1)
