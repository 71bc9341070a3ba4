"""`make run` serves the product the way production does (issue 31): its settings have DEBUG
off, persistent database connections with health checks and production's static files, while
`make dev`'s keep debug on and one connection per request; the error pages are the product's
own, with the request id; and a warning says so when the server listens beyond loopback with
the local defaults."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import path

from devserver import run

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": "k3y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN",
    "DJANGO_ALLOWED_HOSTS": "desk.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/ticketdesk",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}
# What a shell may carry that would change the defaults under test.
TUNING = {
    "DJANGO_SETTINGS_MODULE",
    "DJANGO_DEBUG",
    "DB_CONN_MAX_AGE",
    "DJANGO_ALLOWED_HOSTS",
    "DJANGO_SECRET_KEY",
    "WEB_SERVER",
}


def _settings_of(module: str, extra_env: dict[str, str] | None = None) -> dict:
    """The settings that decide how the product serves, as `module` gives them in a fresh
    process (a settings module is read once per process)."""
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "db = s.DATABASES['default']; print(json.dumps({"
        "'DEBUG': s.DEBUG, 'CONN_MAX_AGE': db['CONN_MAX_AGE'], "
        "'CONN_HEALTH_CHECKS': db['CONN_HEALTH_CHECKS'], "
        "'static': s.STORAGES['staticfiles']['BACKEND'], "
        "'autorefresh': s.WHITENOISE_AUTOREFRESH if hasattr(s, 'WHITENOISE_AUTOREFRESH') "
        "else s.DEBUG, "
        "'whitenoise': 'whitenoise.middleware.WhiteNoiseMiddleware' in s.MIDDLEWARE, "
        "'ALLOWED_HOSTS': s.ALLOWED_HOSTS}))"
    )
    env = {k: v for k, v in os.environ.items() if k not in TUNING}
    env.update(extra_env or {}, DJANGO_SETTINGS_MODULE=module)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def _make_target(name: str) -> str:
    """The recipe of a Makefile target (its command lines)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return "\n".join(recipe)


def test_make_run_and_make_dev_start_the_runner_each_with_its_settings():
    assert _make_target("run") == "$(PYTHON) -m devserver.run"
    assert _make_target("dev") == "WEB_SERVER=runserver $(PYTHON) -m devserver.run"
    assert run.settings_module({}) == "config.settings.local"
    assert run.settings_module({"WEB_SERVER": "runserver"}) == "config.settings.dev"


def test_make_runs_settings_serve_as_production_does():
    make_run = _settings_of(run.settings_module({}))
    production = _settings_of("config.settings.production", PRODUCTION_ENV)
    assert make_run["DEBUG"] is False
    # Persistent connections, checked before reuse, as production keeps them under gunicorn.
    assert make_run["CONN_MAX_AGE"] == production["CONN_MAX_AGE"] == 60
    assert make_run["CONN_HEALTH_CHECKS"] is production["CONN_HEALTH_CHECKS"] is True
    # Static files: what collectstatic wrote, through production's storage and whitenoise.
    assert make_run["static"] == production["static"]
    assert make_run["whitenoise"] and make_run["autorefresh"] is False
    assert make_run["ALLOWED_HOSTS"] == ["*"]  # on loopback (the bind warning covers the rest)


def test_make_devs_settings_debug_with_a_connection_per_request():
    make_dev = _settings_of(run.settings_module({"WEB_SERVER": "runserver"}))
    assert make_dev["DEBUG"] is True
    assert make_dev["CONN_MAX_AGE"] == 0  # runserver's thread per connection
    assert make_dev["autorefresh"] is True


def test_debug_and_connection_age_can_still_be_chosen():
    chosen = _settings_of("config.settings.local", {"DJANGO_DEBUG": "true", "DB_CONN_MAX_AGE": "0"})
    assert chosen["DEBUG"] is True and chosen["CONN_MAX_AGE"] == 0


# --- the error pages ---------------------------------------------------------------------


def _boom(request):
    raise RuntimeError("a bug")


urlpatterns = [path("console/boom/", _boom)]
handler500 = "config.views.server_error"


@pytest.mark.urls(__name__)
def test_a_server_error_is_the_products_page_with_the_request_id(client, db):
    client.raise_request_exception = False
    response = client.get("/console/boom/", HTTP_X_REQUEST_ID="req-500-check")
    assert response.status_code == 500
    assert response["X-Request-ID"] == "req-500-check"
    body = response.content.decode()
    assert "Something went wrong on our side." in body and "Ticketdesk" in body
    assert "Request id req-500-check" in body
    assert "Traceback" not in body and "a bug" not in body


def test_a_missing_page_gives_the_request_id(client, db):
    response = client.get("/console/no-such-page/", HTTP_X_REQUEST_ID="req-404-check")
    assert response.status_code == 404
    body = response.content.decode()
    assert "does not exist, or you are not allowed to see it" in body
    assert "Request id req-404-check" in body


# --- listening beyond loopback -------------------------------------------------------------

SAFE = {"DJANGO_ALLOWED_HOSTS": "desk.lan", "DJANGO_SECRET_KEY": "a-long-random-secret"}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_no_warning_on_loopback_whatever_is_set(host):
    assert run.exposure_warning(host, {}) is None
    assert run.exposure_warning(host, {"WEB_SERVER": "runserver"}) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "desk.lan"])
def test_a_warning_when_listening_beyond_loopback_without_hosts_and_secret(host):
    warning = run.exposure_warning(host, {})
    assert warning is not None and warning.startswith("warning:")
    assert host in warning
    assert "DJANGO_ALLOWED_HOSTS unset" in warning and "DJANGO_SECRET_KEY unset" in warning
    assert run.exposure_warning(host, SAFE) is None


def test_the_warning_names_only_what_is_missing():
    only_hosts = run.exposure_warning("0.0.0.0", {"DJANGO_SECRET_KEY": "x" * 50})
    assert "DJANGO_ALLOWED_HOSTS unset" in only_hosts and "DJANGO_SECRET_KEY" not in only_hosts
    only_key = run.exposure_warning("0.0.0.0", {"DJANGO_ALLOWED_HOSTS": "desk.lan"})
    assert "DJANGO_SECRET_KEY unset" in only_key and "DJANGO_ALLOWED_HOSTS unset" not in only_key


def test_debug_pages_beyond_loopback_are_warned_about_too():
    dev = {**SAFE, "WEB_SERVER": "runserver"}
    assert "debug pages on" in run.exposure_warning("0.0.0.0", dev)
    assert run.exposure_warning("0.0.0.0", {**dev, "DJANGO_DEBUG": "false"}) is None
    assert "debug pages on" in run.exposure_warning("0.0.0.0", {**SAFE, "DJANGO_DEBUG": "on"})


def test_the_bind_address_is_written_as_gunicorn_and_runserver_take_it():
    assert run._address("0.0.0.0", 8000) == "0.0.0.0:8000"
    assert run._address("::", 8000) == "[::]:8000"
    assert run._address("[::1]", 8001) == "[::1]:8001"
    assert run._local_address("0.0.0.0") == "127.0.0.1"
    assert run._local_address("::") == "::1"
    assert run._local_address("192.168.1.20") == "192.168.1.20"


def test_make_run_scans_uploads_with_its_own_clamd(tmp_path, monkeypatch, settings):
    """Unless ATTACHMENT_SCANNER says otherwise, `make run` starts clamd and the product scans
    every upload with it (the EICAR test file is what it finds)."""
    from attachments import scanning
    from tests.attachments.helpers import eicar_bytes

    monkeypatch.setattr(run, "DATA_DIR", tmp_path)
    env: dict[str, str] = {}
    clamd = run._start_clamd(env)
    assert clamd is not None
    try:
        assert env["ATTACHMENT_SCANNER"] == "clamav"
        settings.ATTACHMENT_SCANNER, settings.CLAMD_ADDRESS = "clamav", env["CLAMD_ADDRESS"]
        assert scanning.ping()
        scanning.scan([b"a clean file\n"])
        with pytest.raises(scanning.Infected):
            scanning.scan([eicar_bytes()])
    finally:
        clamd.stop()


@pytest.mark.parametrize("chosen", ["", "clamav"])
def test_a_scanner_chosen_in_the_environment_is_left_alone(tmp_path, monkeypatch, chosen):
    monkeypatch.setattr(run, "DATA_DIR", tmp_path)
    env = {"ATTACHMENT_SCANNER": chosen}
    assert run._start_clamd(env) is None
    assert env == {"ATTACHMENT_SCANNER": chosen}
    assert not (tmp_path / "clamd").exists()
