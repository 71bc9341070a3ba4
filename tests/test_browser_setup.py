"""`make test` finds the browser tests' Chromium wherever it is, and installs one when there
is none (devserver/browser.py), saying so; it never lets the browser tests skip quietly."""

import os
import subprocess

import pytest

from devserver import browser


def _fake_executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_system_browser(monkeypatch):
    monkeypatch.setattr(browser, "SYSTEM_PATHS", ())
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)


def test_playwrights_own_chromium_is_found(tmp_path, no_system_browser):
    chrome = _fake_executable(tmp_path / "chromium-1200" / "chrome-linux" / "chrome")
    assert browser.find_browser({"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path)}) == str(chrome)


def test_a_wrong_chromium_executable_is_reported_not_bypassed(tmp_path):
    not_executable = tmp_path / "chromium"
    not_executable.write_text("")
    env = {"CHROMIUM_EXECUTABLE": str(not_executable)}
    said = []
    assert browser.find_browser(env) is None
    assert browser.ensure_browser(said.append, env) is None
    assert "is not an executable" in said[0]


def test_without_a_browser_playwrights_installer_runs_and_says_so(
    tmp_path, no_system_browser, monkeypatch
):
    env = {"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path)}
    ran = []

    def fake_run(argv, **kwargs):
        ran.append(argv)
        _fake_executable(tmp_path / "chromium-1300" / "chrome-linux" / "chrome")
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(browser.subprocess, "run", fake_run)
    said = []

    found = browser.ensure_browser(said.append, env)

    assert ran == [[browser.sys.executable, "-m", "playwright", "install", "chromium"]]
    assert found == str(tmp_path / "chromium-1300" / "chrome-linux" / "chrome")
    assert any("installing Chromium" in line for line in said)
    assert said[-1] == f"Browser for the browser tests: {found}"


def test_when_playwright_cannot_download_root_falls_back_to_the_package_manager(
    tmp_path, no_system_browser, monkeypatch
):
    env = {"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "empty")}
    ran = []
    installed = _fake_executable(tmp_path / "bin" / "chromium")

    def fake_run(argv, **kwargs):
        ran.append(argv[:3])
        if argv[:3] == ["apt-get", "install", "-y"]:
            monkeypatch.setattr(browser, "SYSTEM_PATHS", (str(installed),))
        ok = argv[0] == "apt-get"  # no internet for Playwright's download
        return subprocess.CompletedProcess(argv, 0 if ok else 1)

    monkeypatch.setattr(browser.subprocess, "run", fake_run)
    monkeypatch.setattr(browser.os, "geteuid", lambda: 0)
    monkeypatch.setattr(
        browser.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None
    )

    found = browser.ensure_browser(lambda line: None, env)

    assert ran[0][1:] == ["-m", "playwright"]
    assert ran[1:] == [["apt-get", "update"], ["apt-get", "install", "-y"]]
    assert found == str(installed)


def test_with_no_way_to_install_the_run_says_the_browser_tests_will_fail(
    tmp_path, no_system_browser, monkeypatch
):
    monkeypatch.setattr(
        browser.subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(argv, 1)
    )
    monkeypatch.setattr(browser.os, "geteuid", lambda: 1000)  # not root: no apt-get
    said = []

    assert browser.ensure_browser(said.append, {"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path)}) is None
    assert "the browser tests will fail" in said[-1]


def test_the_suite_runs_with_a_browser():
    """What the browser tests will launch exists here (make test installed it if needed)."""
    found = browser.find_browser()
    assert found is not None and os.access(found, os.X_OK)
