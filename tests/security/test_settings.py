"""Safe defaults: what a server imports is production; production fails loudly without its
secrets and passes `check --deploy` without a warning; /metrics is not public."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import StaffFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]
SECRET = "k3y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"

PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": SECRET,
    "DJANGO_ALLOWED_HOSTS": "desk.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/ticketdesk",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def run(code_or_args, env_overrides, *, module=False):
    env = {
        k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", *PRODUCTION_ENV}
    }
    env.update(env_overrides)
    args = code_or_args if module else ["-c", code_or_args]
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


@pytest.mark.parametrize("module", ["config.wsgi", "config.celery_app"])
def test_servers_default_to_production_settings(module):
    code = (
        f"import {module}, django.conf; s = django.conf.settings; "
        "print(s.SETTINGS_MODULE, s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE)"
    )
    result = run(code, PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-4:] == ["config.settings.production", "False", "True", "True"]


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL"])
def test_production_refuses_to_start_without_its_environment(missing):
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != missing}
    result = run("import config.wsgi", env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert missing in result.stderr


def test_check_deploy_prints_no_warning_with_the_documented_environment():
    result = run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {**PRODUCTION_ENV, "DJANGO_SETTINGS_MODULE": "config.settings.production"},
        module=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_hsts_and_ssl_redirect_can_be_turned_off_for_a_plain_http_deployment():
    code = (
        "import config.wsgi, django.conf; s = django.conf.settings; "
        "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER)"
    )
    result = run(
        code, {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "false", "SECURE_HSTS_SECONDS": "0"}
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("False 0 ('HTTP_X_FORWARDED_PROTO', 'https')")


def test_manage_py_keeps_local_settings():
    assert "config.settings.local" in (ROOT / "manage.py").read_text()


# --- /metrics ---------------------------------------------------------------------------


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    return settings.METRICS_TOKEN


def test_metrics_answer_the_bearer_token(db, client, token):
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert b"# HELP" in response.content


def test_metrics_refuse_anonymous_and_wrong_tokens(db, client, token):
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    assert client.get("/metrics/", HTTP_AUTHORIZATION="Basic Zm9vOmJhcg==").status_code == 401


def test_metrics_refuse_a_logged_in_non_staff_user_and_admit_staff(db, client, token):
    client.force_login(UserFactory())
    assert client.get("/metrics").status_code == 403
    client.force_login(StaffFactory())
    assert client.get("/metrics").status_code == 200


def test_with_no_token_configured_no_bearer_gets_in(db, client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 401
